// A knowledge base's name where the user picks one: two with the same name are told apart by their intro
// (else the end of their id), so the app form never shows two identical choices.
import type { Dataset } from "./pages/Knowledge";

export function DatasetName({ dataset, all }: { dataset: Pick<Dataset, "_id" | "name" | "intro">; all: Pick<Dataset, "_id" | "name">[] }) {
  const twins = all.filter((d) => d.name === dataset.name).length > 1;
  if (!twins) return <>{dataset.name}</>;
  const intro = (dataset.intro ?? "").trim();
  const hint = intro ? (intro.length > 40 ? `${intro.slice(0, 40)}…` : intro) : `id …${dataset._id.slice(-6)}`;
  return <>{dataset.name} <span className="muted small" data-testid="kb-hint">({hint})</span></>;
}
