// The public chat page of a share link: /chat/share?shareId=…[&authToken=…][&embed=1]. No account: the
// visitor is named by an outLinkUid kept in this browser (localStorage), or by the link's authToken
// when the site that sent them here gave one. Requests carry neither an API key nor a session cookie
// token. `embed=1` drops the header, for an iframe on another site.
import { useEffect, useRef, useState } from "react";
import { api, streamSse } from "../api";
import { Markdown } from "../markdown";
import { message as english } from "../i18n";
import { t } from "../lang";
import { FeedbackBar, Rating, feedbackFields } from "../feedback";

/** One message; an answer has its record id (dataId) once stored, and the visitor's rating of it. */
type Line = Rating & { role: "user" | "ai"; text: string; error?: string; status?: string; dataId?: string; done?: boolean };
type Init = { appId: string; app: { name: string; intro: string; chatConfig: { welcomeText?: string } }; outLink: { name: string } };

function randomId(n = 24): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

/** The visitor's id for this link: the authToken in the address, else one kept in this browser. */
function visitorId(shareId: string, authToken: string | null): string {
  if (authToken) return authToken;
  const key = `fathom.share.${shareId}.outLinkUid`;
  let uid = localStorage.getItem(key);
  if (!uid) {
    uid = `visitor-${randomId(20)}`;
    localStorage.setItem(key, uid);
  }
  return uid;
}

function chatKey(shareId: string): string {
  return `fathom.share.${shareId}.chatId`;
}

export function SharePage() {
  const query = new URLSearchParams(location.search);
  const shareId = query.get("shareId") ?? "";
  const embed = query.get("embed") === "1";
  const [uid] = useState(() => visitorId(shareId, query.get("authToken")));
  const [chatId, setChatId] = useState(() => localStorage.getItem(chatKey(shareId)) || randomId());
  const [init, setInit] = useState<Init | null>(null);
  const [fatal, setFatal] = useState("");
  const [lines, setLines] = useState<Line[]>([]);
  const [input, setInput] = useState("");
  const [busy, setBusy] = useState(false);
  const bottom = useRef<HTMLDivElement>(null);
  // The chat's stored records, once shown: a message sent before they arrive waits for them, so they
  // never replace the question and its answer (a slow history answer did, on a loaded server).
  const recordsShown = useRef<Promise<void>>(Promise.resolve());

  useEffect(() => {
    if (!shareId) { setFatal(t("This address has no shareId.")); return; }
    let current = true; // this chat's answers only: another chat's (New chat) arriving late are dropped
    api<Init>("GET", "/api/core/chat/outLink/init", undefined, { shareId, outLinkUid: uid, chatId }, true)
      .then((data) => { if (current) { setInit(data); document.title = data.app.name; } })
      .catch((e) => { if (current) setFatal((e as Error).message); });
    recordsShown.current = api<{ list: any[] }>("POST", "/api/core/chat/getPaginationRecords", { shareId, outLinkUid: uid, chatId, pageSize: 30 }, undefined, true)
      .then((page) => { if (current) setLines(page.list.map((r) => ({
        role: r.obj === "Human" ? "user" : "ai", text: (r.value ?? []).map((v: any) => v?.text?.content ?? "").join(""), dataId: r.dataId, done: true,
        good: typeof r.userGoodFeedback === "string" ? r.userGoodFeedback : undefined, bad: typeof r.userBadFeedback === "string" ? r.userBadFeedback : undefined,
      }))); })
      .catch(() => undefined);
    return () => { current = false; };
  }, [shareId, uid, chatId]);

  useEffect(() => { bottom.current?.scrollIntoView({ block: "end" }); }, [lines]);

  const newChat = () => {
    const fresh = randomId();
    localStorage.setItem(chatKey(shareId), fresh);
    setLines([]);
    setChatId(fresh);
  };

  const send = async (e: React.FormEvent) => {
    e.preventDefault();
    const text = input.trim();
    if (!text || busy) return;
    setInput("");
    setBusy(true);
    localStorage.setItem(chatKey(shareId), chatId);
    await recordsShown.current;
    const answerId = randomId(); // the answer's record id (FastGPT's responseChatItemId): rated at once
    setLines((old) => [...old, { role: "user", text }, { role: "ai", text: "", dataId: answerId }]);
    const update = (change: (line: Line) => Line) => setLines((old) => [...old.slice(0, -1), change(old[old.length - 1])]);
    const body = { shareId, outLinkUid: uid, chatId, stream: true, detail: true, responseChatItemId: answerId, messages: [{ role: "user", content: text }] };
    try {
      await streamSse("/api/v1/chat/completions", body, ({ event, data }) => {
        const delta = data?.choices?.[0]?.delta;
        if ((event === "answer" || event === "fastAnswer" || event === "message") && delta?.content) update((l) => ({ ...l, text: l.text + delta.content, status: "" }));
        else if (event === "flowNodeStatus") update((l) => ({ ...l, status: data?.status === "running" ? `${data?.name ?? ""}…` : "" }));
        else if (event === "error") update((l) => ({ ...l, error: english(String(data?.message ?? JSON.stringify(data)), data?.statusText ?? "") }));
      }, undefined, true);
    } catch (err) {
      update((l) => ({ ...l, error: (err as Error).message }));
    } finally {
      update((l) => ({ ...l, done: true }));
      setBusy(false);
    }
  };

  /** Rate an answer of this chat, as this visitor (the owner's Logs show it). */
  const rate = async (index: number, kind: "good" | "bad" | null, comment = "") => {
    const line = lines[index];
    if (!line?.dataId || !init) return;
    const rating = feedbackFields(kind, comment);
    const body = { shareId, outLinkUid: uid, appId: init.appId, chatId, dataId: line.dataId, ...rating };
    await api("POST", "/api/core/chat/feedback/updateUserFeedback", body, undefined, true);
    setLines((old) => old.map((l, i) => (i === index ? { ...l, good: rating.userGoodFeedback, bad: rating.userBadFeedback } : l)));
  };

  if (fatal) return <div className="share-page"><div className="share-fatal error" role="alert">{fatal}</div></div>;
  const welcome = init?.app.chatConfig.welcomeText;
  return (
    <div className={"share-page" + (embed ? " embed" : "")} data-testid="share-page">
      {!embed && (
        <header className="share-head">
          <b data-testid="share-app-name">{init?.app.name ?? "…"}</b>
          <button type="button" className="link" onClick={newChat}>{t("New chat")}</button>
        </header>
      )}
      <div className="messages share-messages">
        {welcome && !lines.length && <div className="msg ai"><div className="avatar">◉</div><div className="bubble"><Markdown text={welcome} /></div></div>}
        {lines.map((line, i) => (
          <div key={i} className={"msg " + line.role} data-testid={line.role === "ai" ? "share-answer" : "share-question"}>
            <div className="avatar">{line.role === "user" ? "🙂" : "◉"}</div>
            <div className="bubble">
              {line.text && <Markdown text={line.text} />}
              {line.status && !line.text && <div className="muted small">{line.status}</div>}
              {line.error && <div className="error" role="alert" data-testid="share-error">{line.error}</div>}
              {line.role === "ai" && line.done && line.dataId && !line.error && line.text && <FeedbackBar rating={line} onRate={(kind, comment) => rate(i, kind, comment)} />}
            </div>
          </div>
        ))}
        <div ref={bottom} />
      </div>
      <div className="composer">
        <form onSubmit={send}>
          <textarea name="message" rows={1} placeholder={t("Message… (Enter to send, Shift+Enter for a new line)")} value={input} onChange={(e) => setInput(e.target.value)}
            onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) send(e); }} />
          <button className="primary" disabled={!input.trim() || busy}>{t("Send")}</button>
        </form>
      </div>
    </div>
  );
}
