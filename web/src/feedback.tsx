// Thumbs up / down under an answer, shared by the console chat and the share page.
import { useState } from "react";
import { Icon } from "./icons";
import { t } from "./lang";

/** The user's rating of one answer (FastGPT's userGoodFeedback / userBadFeedback: the comment). */
export type Rating = { good?: string; bad?: string };
export type Rate = (kind: "good" | "bad" | null, comment?: string) => Promise<void>;

/** The body fields of `updateUserFeedback` for a rating: the same rating again takes it back (null). */
export function feedbackFields(kind: "good" | "bad" | null, comment = ""): { userGoodFeedback?: string; userBadFeedback?: string } {
  if (kind === "good") return { userGoodFeedback: comment || "yes" };
  if (kind === "bad") return { userBadFeedback: comment || "yes" };
  return {};
}

/** Thumbs up / down under an answer; down asks what was wrong (the comment goes to the app's logs). */
export function FeedbackBar({ rating, onRate }: { rating: Rating; onRate: Rate }) {
  const [asking, setAsking] = useState(false);
  const [comment, setComment] = useState("");
  const [error, setError] = useState("");
  const run = (kind: "good" | "bad" | null, text = "") => onRate(kind, text).then(() => { setAsking(false); setError(""); }).catch((e) => setError((e as Error).message));
  return (
    <div className="feedback" data-testid="feedback">
      <div className="row small">
        <button type="button" className={"small" + (rating.good ? " primary" : "")} aria-pressed={!!rating.good} aria-label={t("Good answer")} title={t("Good answer")} onClick={() => run(rating.good ? null : "good")}><Icon name="up" /></button>
        <button type="button" className={"small" + (rating.bad ? " danger" : "")} aria-pressed={!!rating.bad} aria-label={t("Bad answer")} title={t("Bad answer")} onClick={() => (rating.bad ? run(null) : setAsking(!asking))}><Icon name="down" /></button>
        {rating.bad && rating.bad !== "yes" && <span className="muted" data-testid="feedback-comment">{rating.bad}</span>}
      </div>
      {asking && (
        <form className="row wrap" onSubmit={(e) => { e.preventDefault(); run("bad", comment.trim()); }}>
          <input name="feedbackComment" autoFocus placeholder={t("What was wrong? (optional)")} value={comment} onChange={(e) => setComment(e.target.value)} style={{ flex: "1 1 200px" }} maxLength={5000} />
          <button className="primary small">{t("Send feedback")}</button>
        </form>
      )}
      {error && <div className="error small">{error}</div>}
    </div>
  );
}
