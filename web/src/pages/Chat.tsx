import { useCallback, useEffect, useRef, useState } from "react";
import { api, fmtTime, streamSse } from "../api";
import { AppDetail, AppSummary, AppVariable, getApp, listApps, newChatId, typeLabel } from "../apps";
import { Markdown } from "../markdown";
import { linkProps, navigate } from "../router";
import { ScoreTrace } from "./SearchTest";
import { Icon } from "../icons";
import { message as english, nodeName, useEscape } from "../i18n";
import { t } from "../lang";
import { FeedbackBar, feedbackFields } from "../feedback";

type Tool = { id: string; name: string; params: string; response: string };
type Quote = { id: string; q: string; a?: string; sourceName?: string; collectionId?: string; score?: { type: string; value: number }[]; trace?: any };
type Interactive = { type: string; params: any; answered?: boolean };
type Indexing = { datasetId: string; name: string; pending: number; total: number };
export type Turn = {
  id: string; role: "user" | "ai"; text: string; reasoning: string; tools: Tool[]; quotes: Quote[];
  interactive: Interactive | null; status: string; error: string; done: boolean; nodes: any[];
  /** Errors of workflow nodes (`flowNodeResponse.error`): a failed AI chat answers nothing but this. */
  nodeErrors: string[];
  /** Knowledge bases still indexing when the answer searched them (`datasetIndexing`): it may miss passages. */
  indexing: Indexing[];
  /** The stored record's id (reopened chats; for a new answer, the responseChatItemId the page sent). */
  dataId?: string;
  /** The user's feedback on this answer (FastGPT's userGoodFeedback / userBadFeedback: the comment). */
  good?: string;
  bad?: string;
  /** A stored answer's run state (Fathom's record `status`): still running, or its server went away. */
  runState?: "running" | "interrupted";
};

const emptyTurn = (role: "user" | "ai", text = ""): Turn => ({ id: Math.random().toString(36).slice(2), role, text, reasoning: "", tools: [], quotes: [], interactive: null, status: "", error: "", done: role === "user", nodes: [], nodeErrors: [], indexing: [] });

/** Add the knowledge bases still indexing that a search node's response (or the event) names, once each. */
function withIndexing(known: Indexing[], items: unknown): Indexing[] {
  if (!Array.isArray(items)) return known;
  const seen = new Set(known.map((k) => k.datasetId));
  return [...known, ...items.filter((i: any) => i?.datasetId && !seen.has(i.datasetId) && seen.add(i.datasetId))];
}

/** Fold one SSE event of FastGPT's chat stream into the assistant turn. Exported for the editor's debug run. */
export function applyEvent(turn: Turn, event: string, data: any): Turn {
  const t = { ...turn };
  const delta = data?.choices?.[0]?.delta;
  switch (event) {
    case "answer":
    case "fastAnswer":
    case "message":
      if (delta?.content) t.text += delta.content;
      if (delta?.reasoning_content) t.reasoning += delta.reasoning_content;
      if (typeof data === "string" && event === "message") t.text += data;
      break;
    case "flowNodeStatus":
      t.status = data?.status === "running" ? `${nodeName(data.name)}…` : "";
      break;
    case "toolCall": {
      const tool = data?.tool ?? data ?? {};
      t.tools = [...t.tools, { id: tool.id, name: tool.toolName || tool.functionName || "tool", params: tool.params ?? "", response: tool.response ?? "" }];
      break;
    }
    case "toolParams":
      { const tool = data?.tool ?? data ?? {}; t.tools = t.tools.map((x) => (x.id === tool.id ? { ...x, params: x.params + (tool.params ?? "") } : x)); }
      break;
    case "toolResponse":
      { const tool = data?.tool ?? data ?? {}; t.tools = t.tools.map((x) => (x.id === tool.id ? { ...x, response: x.response + (tool.response ?? "") } : x)); }
      break;
    case "datasetIndexing":
      t.indexing = withIndexing(t.indexing, data?.datasets);
      break;
    case "flowNodeResponse":
      t.nodes = [...t.nodes, data];
      t.indexing = withIndexing(t.indexing, data?.datasetIndexing);
      if (nodeError(data)) t.nodeErrors = [...t.nodeErrors, nodeError(data)!];
      t.quotes = uniqueQuotes([...t.quotes, ...quotesOf(data)]);
      break;
    case "flowResponses":
      if (Array.isArray(data)) {
        if (!t.nodes.length) { t.nodes = data; t.nodeErrors = data.map(nodeError).filter((x): x is string => !!x); }
        for (const n of data) t.indexing = withIndexing(t.indexing, n?.datasetIndexing);
        if (!t.quotes.length) t.quotes = uniqueQuotes(data.flatMap(quotesOf));
      }
      break;
    case "interactive":
      t.interactive = data?.interactive ?? data;
      break;
    case "error":
      t.error = english(String(data?.message ?? data?.error?.message ?? (typeof data === "string" ? data : JSON.stringify(data))), data?.statusText ?? "");
      break;
  }
  return t;
}

/** "AI chat: Connection error." for a node response that carries an error, else null. */
export function nodeError(data: any): string | null {
  const error = data?.error ?? data?.errorText;
  if (!error) return null;
  const text = typeof error === "string" ? error : error.message ?? JSON.stringify(error);
  const name = nodeName(data?.moduleName ?? data?.name);
  return name ? `${name}: ${english(text)}` : english(text);
}

/** A node response's quotes, and those of the runs inside it (a loop's, a child app's, a tool call's), as the
 * record's totalQuoteList counts them; a child app whose runs are hidden gives the quotes it rolled up. */
function quotesOf(node: any): Quote[] {
  if (!node || typeof node !== "object") return [];
  const nested = ["pluginDetail", "loopDetail", "toolDetail"].filter((key) => Array.isArray(node[key]));
  if (nested.length) return nested.flatMap((key) => node[key].flatMap(quotesOf));
  return Array.isArray(node.quoteList) ? node.quoteList.filter(Boolean) : [];
}

function uniqueQuotes(quotes: Quote[]): Quote[] {
  const seen = new Set<string>();
  return quotes.filter((q) => (seen.has(q.id) ? false : (seen.add(q.id), true)));
}

function turnsFromRecords(list: any[]): Turn[] {
  return list.map((item) => {
    const turn = emptyTurn(item.obj === "Human" ? "user" : "ai");
    turn.done = true;
    turn.dataId = item.dataId ?? item._id;
    if (typeof item.userGoodFeedback === "string") turn.good = item.userGoodFeedback;
    if (typeof item.userBadFeedback === "string") turn.bad = item.userBadFeedback;
    if (item.status === "running" || item.status === "interrupted") turn.runState = item.status;
    for (const v of item.value ?? []) {
      if (v.type === "text") turn.text += v.text?.content ?? "";
      else if (v.type === "reasoning") turn.reasoning += v.reasoning?.content ?? "";
      else if (v.type === "tool") for (const tool of v.tools ?? []) turn.tools.push({ id: tool.id, name: tool.toolName || tool.functionName, params: tool.params ?? "", response: tool.response ?? "" });
      else if (v.type === "interactive") turn.interactive = v.interactive;
    }
    if (Array.isArray(item.totalQuoteList)) turn.quotes.push(...item.totalQuoteList);
    turn.indexing = withIndexing(turn.indexing, item.datasetIndexing);
    for (const n of item.responseData ?? []) {
      turn.quotes.push(...quotesOf(n));
      turn.indexing = withIndexing(turn.indexing, n?.datasetIndexing);
      const failed = nodeError(n);
      if (failed) turn.nodeErrors.push(failed);
    }
    turn.quotes = uniqueQuotes(turn.quotes);
    return turn;
  });
}

/** The app's chat settings: an app key may not read the app's detail, so it reads what chat/init shows. */
function loadChatApp(appId: string, appKey: boolean): Promise<AppDetail> {
  if (!appKey) return getApp(appId);
  return api<any>("POST", "/api/core/chat/init", { appId }).then(
    (d) => ({ _id: appId, name: d.app.name, type: d.app.type, chatConfig: d.app.chatConfig }) as AppDetail,
  );
}

export function ChatPage({ appId, chatId, appKey = false }: { appId?: string; chatId?: string; appKey?: boolean }) {
  const [apps, setApps] = useState<AppSummary[] | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    // A key limited to one app may not read the app's detail: the app list answers its own app only.
    if (appKey && appId) listApps().then((list) => setApps(list.length ? list : [{ _id: appId, name: "App", type: "" }])).catch(() => setApps([{ _id: appId, name: "App", type: "" }]));
    else listApps().then(setApps).catch((e) => setError(e.message));
  }, [appKey, appId]);
  useEffect(() => { if (!appId && apps?.length) navigate(`/chat/${apps[0]._id}`); }, [appId, apps]);
  if (error) return <div className="page"><h1>{t("Chat")}</h1><div className="error">{t("The app API answered:")} {error}</div></div>;
  if (!apps) return <div className="page muted">{t("Loading…")}</div>;
  if (!apps.length) return <div className="page"><h1>{t("Chat")}</h1><div className="card muted">{t("No apps yet.")} <a {...linkProps("/apps")}>{t("Create one")}</a> {t("— a simple app on a knowledge base takes a minute.")}</div></div>;
  if (!appId) return null;
  return <ChatWithApp key={appId} apps={apps} appId={appId} chatId={chatId} appKey={appKey} />;
}

function ChatWithApp({ apps, appId, chatId, appKey }: { apps: AppSummary[]; appId: string; chatId?: string; appKey: boolean }) {
  const [showHistory, setShowHistory] = useState(false);
  const [app, setApp] = useState<AppDetail | null>(null);
  const [histories, setHistories] = useState<{ chatId: string; title: string; updateTime: string }[]>([]);
  const [turns, setTurns] = useState<Turn[]>([]);
  const [input, setInput] = useState("");
  const [variables, setVariables] = useState<Record<string, unknown>>({});
  const [streaming, setStreaming] = useState(false);
  const [quote, setQuote] = useState<Quote | null>(null);
  const [guide, setGuide] = useState<string[]>([]);
  const closeQuote = useCallback(() => setQuote(null), []);
  useEscape(closeQuote, !!quote);
  const abort = useRef<AbortController | null>(null);
  const bottom = useRef<HTMLDivElement>(null);
  const currentChat = useRef(chatId ?? newChatId());
  // the opened chat's records, once shown (a message sent before they arrive waits for them)
  const recordsShown = useRef<Promise<void>>(Promise.resolve());

  const loadHistories = useCallback(() => {
    api<any>("POST", "/api/core/chat/history/getHistories", { appId, offset: 0, pageSize: 50 })
      .then((d) => setHistories(Array.isArray(d) ? d : d?.list ?? []))
      .catch(() => setHistories([]));
  }, [appId]);

  useEffect(() => { loadChatApp(appId, appKey).then((a) => {
    setApp(a);
    const defaults: Record<string, unknown> = {};
    for (const v of a.chatConfig?.variables ?? []) if (v.defaultValue !== undefined) defaults[v.key] = v.defaultValue;
    setVariables(defaults);
  }).catch(() => setApp({ _id: appId, name: apps.find((x) => x._id === appId)?.name ?? appId, type: "" })); loadHistories(); }, [appId, appKey, apps, loadHistories]);

  useEffect(() => {
    currentChat.current = chatId ?? newChatId();
    setTurns([]);
    recordsShown.current = Promise.resolve();
    if (!chatId) return;
    let current = true; // this chat's records only: an earlier chat's, arriving late, are dropped
    // Records carry no node responses; an answer with no text may have failed: ask for its nodes' errors.
    const explainSilent = async (loaded: Turn[]) => {
      const silent = loaded.filter((t) => t.role === "ai" && !t.text && !t.interactive && t.dataId);
      if (!silent.length) return;
      const errors = await Promise.all(silent.map((t) => api<any[]>("POST", "/api/core/chat/getResData", { appId, chatId, dataId: t.dataId })
        .then((nodes) => (Array.isArray(nodes) ? nodes.map(nodeError).filter((x): x is string => !!x) : []))
        .catch(() => [] as string[])));
      const byId = new Map(silent.map((t, i) => [t.id, errors[i]]));
      if (current) setTurns((prev) => prev.map((t) => (byId.get(t.id)?.length ? { ...t, nodeErrors: byId.get(t.id)! } : t)));
    };
    recordsShown.current = api<any>("POST", "/api/core/chat/getPaginationRecords", { appId, chatId, offset: 0, pageSize: 100, loadCustomFeedbacks: false })
      .then((d) => {
        if (!current) return;
        const loaded = turnsFromRecords(Array.isArray(d) ? d : d?.list ?? []);
        setTurns(loaded);
        void explainSilent(loaded);
      })
      .catch(() => { if (current) setTurns([]); });
    return () => { current = false; };
  }, [appId, chatId]);

  useEffect(() => { bottom.current?.scrollIntoView({ block: "end" }); }, [turns]);

  /** The question guide: when the app's chatConfig.questionGuide is on, Fathom's stream carries the next
   * questions as its `questionGuide` event before [DONE] (FastGPT's page asks createQuestionGuide after
   * the answer instead); they show as buttons under the answer. */
  const showGuide = (data: unknown) => setGuide(Array.isArray(data) ? data.map(String).slice(0, 5) : []);
  const send = async (content: string) => {
    if (!content.trim() || streaming) return;
    setGuide([]);
    const controller = new AbortController();
    abort.current = controller;
    setStreaming(true);
    await recordsShown.current; // a message sent while the chat's records load goes after them
    // the answer's record id, chosen here (FastGPT's responseChatItemId) so the answer can be rated at once
    const answerId = newChatId();
    setTurns((prev) => [...prev.map((t) => (t.interactive ? { ...t, interactive: { ...t.interactive, answered: true } } : t)), emptyTurn("user", content), { ...emptyTurn("ai"), dataId: answerId }]);
    const update = (fn: (t: Turn) => Turn) => setTurns((prev) => [...prev.slice(0, -1), fn(prev[prev.length - 1])]);
    try {
      // A published app runs its published version; an unpublished one runs its draft (the chat test).
      const path = app?.hasPublished === false ? "/api/core/chat/chatTest" : "/api/v2/chat/completions";
      await streamSse(path, {
        appId, chatId: currentChat.current, stream: true, detail: true, variables, responseChatItemId: answerId,
        messages: [{ role: "user", content }],
      }, ({ event, data }) => (event === "questionGuide" ? showGuide(data) : update((t) => applyEvent(t, event, data))), controller.signal);
    } catch (e) {
      if ((e as Error).name !== "AbortError") update((t) => ({ ...t, error: (e as Error).message }));
    } finally {
      update((t) => ({ ...t, done: true, status: "" }));
      setStreaming(false);
      abort.current = null;
      if (!chatId) history.replaceState(null, "", `/chat/${appId}/${currentChat.current}`);
      loadHistories();
    }
  };
  const newChat = () => {
    abort.current?.abort();
    currentChat.current = newChatId();
    setTurns([]);
    setGuide([]);
    navigate(`/chat/${appId}`);
  };
  const stop = () => {
    api("POST", "/api/v2/chat/stop", { appId, chatId: currentChat.current }).catch(() => undefined);
    abort.current?.abort();
  };
  /** Rate an answer: good or bad with a comment; the same rating again takes it back. */
  const rate = async (turn: Turn, kind: "good" | "bad" | null, comment = "") => {
    if (!turn.dataId) return;
    const rating = feedbackFields(kind, comment);
    await api("POST", "/api/core/chat/feedback/updateUserFeedback", { appId, chatId: currentChat.current, dataId: turn.dataId, ...rating });
    setTurns((prev) => prev.map((x) => (x.id === turn.id ? { ...x, good: rating.userGoodFeedback, bad: rating.userBadFeedback } : x)));
  };
  const submit = (e: React.FormEvent) => { e.preventDefault(); const text = input; setInput(""); send(text); };
  const vars: AppVariable[] = (app?.chatConfig?.variables ?? []).filter((v) => v.type !== "hidden" && v.type !== "internal");
  const welcome = app?.chatConfig?.welcomeText;

  return (
    <div className={"chat" + (showHistory ? " history-open" : "")}>
      <aside className="chat-side">
        {!appKey && (
          <select aria-label="App" value={appId} onChange={(e) => navigate(`/chat/${e.target.value}`)}>
            {apps.map((a) => <option key={a._id} value={a._id}>{a.name}</option>)}
          </select>
        )}
        <div className="row chat-side-buttons">
          <button className="primary grow" onClick={() => { setShowHistory(false); newChat(); }}>{t("+ New chat")}</button>
          <button className="history-toggle" aria-expanded={showHistory} onClick={() => setShowHistory(!showHistory)}>{t("History")}</button>
        </div>
        <div className="muted small hist-title" style={{ marginTop: 6 }}>{t("History")}</div>
        <div className="hist">
          {histories.length === 0 && <div className="muted small">{t("No conversations yet.")}</div>}
          {histories.map((h) => (
            <a key={h.chatId} className={"hist-item" + (h.chatId === chatId ? " active" : "")} title={fmtTime(h.updateTime)} {...linkProps(`/chat/${appId}/${h.chatId}`)} onClick={(e) => { setShowHistory(false); linkProps(`/chat/${appId}/${h.chatId}`).onClick(e); }}>{h.title || t("Untitled")}</a>
          ))}
        </div>
      </aside>
      <section className="chat-main">
        <div className="chat-head">
          <b>{app?.name ?? "…"}</b>
          {app?.type && <span className="badge">{typeLabel(app.type)}</span>}
          {app?.hasPublished === false && <span className="badge" title={t("Not published yet: chatting runs the draft")}>{t("draft")}</span>}
          <div className="grow" />
          {!appKey && <a className="small" {...linkProps(`/apps/${appId}`)}>{t("Edit app")}</a>}
        </div>
        <div className="messages">
          {vars.length > 0 && (
            <div className="msg"><div className="card col grow">
              <b className="small">{t("Variables")}</b>
              <div className="row wrap">
                {vars.map((v) => (
                  <label key={v.key} style={{ flex: "1 1 180px" }}>{v.label || v.key}{v.required ? " *" : ""}
                    {v.type === "select" ? (
                      <select value={String(variables[v.key] ?? "")} onChange={(e) => setVariables({ ...variables, [v.key]: e.target.value })}>
                        <option value="" />
                        {(v.list ?? v.enums?.map((x) => ({ label: x.value, value: x.value })) ?? []).map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
                      </select>
                    ) : (
                      <input name={`var-${v.key}`} type={v.type === "numberInput" ? "number" : "text"} value={String(variables[v.key] ?? "")} onChange={(e) => setVariables({ ...variables, [v.key]: v.type === "numberInput" ? Number(e.target.value) : e.target.value })} />
                    )}
                  </label>
                ))}
              </div>
            </div></div>
          )}
          {turns.length === 0 && (
            <div className="msg ai"><div className="avatar">◉</div><div className="bubble"><Markdown text={welcome || t("Ask **{name}** anything.", { name: app?.name ?? t("the app") })} /></div></div>
          )}
          {turns.map((t, i) => <TurnView key={t.id} turn={t} last={i === turns.length - 1} streaming={streaming} onAnswer={send} onQuote={setQuote} onRate={rate} />)}
          {guide.length > 0 && !streaming && (
            <div className="question-guide row wrap" data-testid="question-guide" aria-label={t("Suggested questions")}>
              {guide.map((q) => <button key={q} className="chip" onClick={() => send(q)}>{q}</button>)}
            </div>
          )}
          <div ref={bottom} />
        </div>
        <div className="composer">
          <form onSubmit={submit}>
            <textarea name="message" rows={1} placeholder={t("Message… (Enter to send, Shift+Enter for a new line)")} value={input} onChange={(e) => setInput(e.target.value)}
              onKeyDown={(e) => { if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) submit(e); }} />
            {streaming ? <button type="button" className="danger" onClick={stop}>{t("■ Stop")}</button> : <button className="primary" disabled={!input.trim()}>{t("Send")}</button>}
          </form>
        </div>
      </section>
      {quote && (
        <div className="modal-bg" onClick={closeQuote}>
          <div className="card modal col" onClick={(e) => e.stopPropagation()}>
            <div className="row"><h2 style={{ margin: 0 }}>{quote.sourceName || t("Quote")}</h2><div className="grow" /><button onClick={() => setQuote(null)}>{t("Close")}</button></div>
            <div className="row small wrap">{quote.score?.map((s) => <span key={s.type} className="badge">{s.type} {s.value.toFixed(4)}</span>)}</div>
            <div className="chunk"><pre>{quote.q}</pre>{quote.a && <pre className="muted">{quote.a}</pre>}</div>
            {quote.trace && <ScoreTrace item={quote as any} />}
          </div>
        </div>
      )}
    </div>
  );
}

function TurnView({ turn, last, streaming, onAnswer, onQuote, onRate }: { turn: Turn; last: boolean; streaming: boolean; onAnswer: (s: string) => void; onQuote: (q: Quote) => void; onRate: (turn: Turn, kind: "good" | "bad" | null, comment?: string) => Promise<void> }) {
  if (turn.role === "user") return <div className="msg user" data-role="user"><div className="avatar"><Icon name="user" /></div><div className="bubble"><Markdown text={turn.text} /></div></div>;
  const busy = !turn.done && !turn.text && !turn.error && !turn.nodeErrors.length;
  return (
    <div className="msg ai" data-role="ai" data-done={turn.done ? "1" : "0"}>
      <div className="avatar">◉</div>
      <div className="bubble">
        {turn.reasoning && (
          <details className="reasoning" open={!turn.done}><summary>{t("Reasoning")}</summary><Markdown text={turn.reasoning} /></details>
        )}
        {turn.tools.map((tool) => (
          <details key={tool.id} className="toolcard" data-testid="tool-card">
            <summary><Icon name="tool" /> <b>{tool.name}</b><span className="muted small">{tool.response ? "done" : "running…"}</span></summary>
            {tool.params && <pre><span className="muted small">{t("Arguments")}</span>{"\n" + pretty(tool.params)}</pre>}
            {tool.response && <pre><span className="muted small">{t("Result")}</span>{"\n" + pretty(tool.response)}</pre>}
          </details>
        ))}
        {turn.indexing.length > 0 && (
          <div className="warn small" data-testid="indexing-notice">
            {turn.indexing.map((d) => t("“{name}” is still indexing: {pending} of {total} documents are not searchable yet.", { name: d.name, pending: d.pending, total: d.total })).join(" ")} {t("This answer may miss passages.")}
          </div>
        )}
        {turn.text && <div className="answer"><Markdown text={turn.text} /></div>}
        {busy && <div className="node-status"><span className="dot" />{turn.status || t("Thinking…")}</div>}
        {!busy && turn.status && !turn.done && <div className="node-status"><span className="dot" />{turn.status}</div>}
        {turn.interactive && <InteractiveView value={turn.interactive} shownText={turn.text} enabled={last && !streaming && !turn.interactive.answered} onAnswer={onAnswer} />}
        {turn.quotes.length > 0 && (
          <div className="quotes">
            <span className="muted small">{t("Sources:")}</span>
            {turn.quotes.map((q, i) => (
              <button key={q.id + i} className="quote-chip" onClick={() => onQuote(q)} title={q.q.slice(0, 200)}>
                [{i + 1}] {q.sourceName || "chunk"}{q.score?.[0] ? ` · ${q.score[0].value.toFixed(3)}` : ""}
              </button>
            ))}
          </div>
        )}
        {turn.nodeErrors.length > 0 && <div className="error" data-testid="node-errors">{turn.nodeErrors.join("\n")}</div>}
        {turn.error && !turn.nodeErrors.some((e) => e.endsWith(turn.error)) && <div className="error">{turn.error}</div>}
        {turn.runState === "interrupted" && <div className="error" data-testid="turn-interrupted">{t("Interrupted: the server answering this stopped before it finished. Ask again.")}</div>}
        {turn.runState === "running" && <div className="muted small" data-testid="turn-running">{t("Still being answered…")}</div>}
        {turn.done && !turn.runState && !turn.text && !turn.error && !turn.nodeErrors.length && !turn.interactive && !turn.tools.length && <div className="muted small">{t("The app sent no answer.")}</div>}
        {turn.done && turn.dataId && !turn.error && <FeedbackBar rating={turn} onRate={(kind, comment) => onRate(turn, kind, comment)} />}
      </div>
    </div>
  );
}

function pretty(s: string): string {
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return s; }
}

export function InteractiveView({ value, shownText, enabled, onAnswer }: { value: Interactive; shownText: string; enabled: boolean; onAnswer: (s: string) => void }) {
  const params = { ...(value.params ?? {}) };
  // The description also arrives as streamed text (fastAnswer); do not show it twice.
  if (params.description && shownText.trim().endsWith(String(params.description).trim())) params.description = "";
  const [form, setForm] = useState<Record<string, unknown>>({});
  if (value.type === "userSelect") {
    const chosen = params.userSelectedVal;
    return (
      <div className="interactive" data-testid="interactive">
        {params.description && <Markdown text={params.description} />}
        <div className="row wrap">
          {(params.userSelectOptions ?? []).map((o: { key: string; value: string }) => (
            <button key={o.key} className={chosen === o.value ? "primary" : ""} disabled={!enabled} onClick={() => onAnswer(o.value)}>{o.value}</button>
          ))}
        </div>
      </div>
    );
  }
  if (value.type === "userInput" || value.type === "formInput") {
    const fields: any[] = params.inputForm ?? [];
    return (
      <form className="interactive" data-testid="interactive" onSubmit={(e) => { e.preventDefault(); onAnswer(JSON.stringify(form)); }}>
        {params.description && <Markdown text={params.description} />}
        {fields.map((f) => (
          <label key={f.key}>{f.label || f.key}{f.required ? " *" : ""}
            {f.type === "select" ? (
              <select disabled={!enabled} required={f.required} value={String(form[f.key] ?? "")} onChange={(e) => setForm({ ...form, [f.key]: e.target.value })}>
                <option value="" />
                {(f.list ?? []).map((o: any) => <option key={o.value} value={o.value}>{o.label}</option>)}
              </select>
            ) : f.type === "textarea" ? (
              <textarea disabled={!enabled} required={f.required} value={String(form[f.key] ?? "")} onChange={(e) => setForm({ ...form, [f.key]: e.target.value })} />
            ) : (
              <input disabled={!enabled} required={f.required} type={f.type === "numberInput" ? "number" : "text"} value={String(form[f.key] ?? f.defaultValue ?? "")}
                onChange={(e) => setForm({ ...form, [f.key]: f.type === "numberInput" ? Number(e.target.value) : e.target.value })} />
            )}
          </label>
        ))}
        <div><button className="primary" disabled={!enabled}>{t("Submit")}</button></div>
      </form>
    );
  }
  if (value.type === "agentAsk" || value.type === "agentPlanAskQuery") {
    return <div className="interactive" data-testid="interactive"><Markdown text={params.content ?? params.question ?? params.description ?? t("The agent asks a question; answer below.")} /></div>;
  }
  return <div className="interactive muted small">{t("Waiting for input (")}{value.type}{t("); reply below to continue.")}</div>;
}
