import { lazy, Suspense, useEffect, useState } from "react";
import { api, getKey, maybeSignedIn, requestsSettled, setCsrf, setKey } from "./api";
import { linkProps, navigate, usePath } from "./router";
import { KnowledgePage } from "./pages/Knowledge";
import { ChatPage } from "./pages/Chat";
import { AppsPage } from "./pages/Apps";
import { KeysPage } from "./pages/Keys";
import { LogsPage } from "./pages/Logs";
import { InvitePage, MembersPage, Who } from "./pages/Members";
import { lang, setLang, t } from "./lang";
import { Icon } from "./icons";

// The workflow editor (React Flow) loads only when opened, keeping the first load small.
const WorkflowEditor = lazy(() => import("./pages/WorkflowEditor"));


const NAV = [
  { path: "/chat", label: "Chat", icon: "chat" },
  { path: "/knowledge", label: "Knowledge", icon: "book" },
  { path: "/apps", label: "Apps", icon: "apps" },
  { path: "/keys", label: "Keys & usage", icon: "key" },
  { path: "/members", label: "Members", icon: "user" },
];

export function App() {
  const path = usePath();
  const [who, setWho] = useState<Who | null>(null);
  const [checking, setChecking] = useState(true);
  const [menuOpen, setMenuOpen] = useState(false);
  const [leaving, setLeaving] = useState(false);

  useEffect(() => {
    // An API key kept in this browser, else the session cookie of a password sign-in (HttpOnly: only
    // the server can tell whether there is one).
    // Without a key or a session hint there is nothing to ask: the sign-in page shows at once, with no 401.
    const check = getKey()
      ? api<Who>("GET", "/api/v1/whoami").catch((e) => { setKey(""); throw e; })
      : maybeSignedIn()
        ? api<Who & { csrfToken: string | null }>("GET", "/api/support/user/account/tokenLogin").then((w) => { setCsrf(w.csrfToken); return w; }).catch((e) => { setCsrf(""); throw e; })
        : Promise.reject(new Error("signed out"));
    check.then(setWho).catch(() => setWho(null)).finally(() => setChecking(false));
  }, []);

  if (path.startsWith("/invite/") && !who && !checking) return <InvitePage token={path.slice("/invite/".length)} onLogin={setWho} />;
  if (checking) return <div className="splash">{t("Fathom…")}</div>;
  if (leaving) return <div className="splash">{t("Signing out…")}</div>;
  if (!who) return <Login onLogin={setWho} />;

  const logout = async () => {
    // The page goes first (no component of it can start a request any more: a list answered during the
    // sign-out would otherwise load the next one), then its requests still in flight are answered: sent
    // after the session ends, they would come back 401.
    setLeaving(true);
    await requestsSettled(5000);
    if (!getKey()) await api("POST", "/api/support/user/account/loginout").catch(() => undefined);
    setKey("");
    setCsrf("");
    setWho(null);
    setLeaving(false);
    navigate("/");
  };
  const section = "/" + (path.split("/")[1] || "chat");
  // A key limited to one app can only chat with that app: the other pages would only answer 403.
  const nav = who.appId ? NAV.filter((n) => n.path === "/chat") : NAV;
  return (
    <div className={"shell" + (menuOpen ? " menu-open" : "")}>
      <nav className="sidebar">
        <div className="brand"><span className="logo">◉</span> Fathom
          <button className="menu-toggle" aria-label="Menu" aria-expanded={menuOpen} onClick={() => setMenuOpen(!menuOpen)}><Icon name="menu" /> {t("Menu")}</button>
        </div>
        {nav.map((n) => (
          <a key={n.path} className={"nav" + (section === n.path ? " active" : "")} {...linkProps(n.path)} onClick={(e) => { setMenuOpen(false); linkProps(n.path).onClick(e); }}>
            <span className="nav-icon"><Icon name={n.icon} /></span>{t(n.label)}
          </a>
        ))}
        <div className="grow" />
        <div className="who">
          <div className="muted small">{t("Signed in as")} {who.username && !who.keyId ? <b data-testid="who-name">{who.username} · </b> : null}<b>{who.role}</b>{who.appId ? " (app key)" : ""}</div>
          <button className="link" onClick={logout}>{t("Sign out")}</button>
          <a className="muted small" href="/docs" target="_blank" rel="noreferrer">{t("API docs ↗")}</a>
          <LangSwitch />
        </div>
      </nav>
      <main className="content">
        <Route path={path} who={who} />
      </main>
    </div>
  );
}

function Route({ path, who }: { path: string; who: Who }) {
  const parts = path.split("/").filter(Boolean);
  if (who.appId) return <ChatPage appId={who.appId} chatId={parts[0] === "chat" && parts[1] === who.appId ? parts[2] : undefined} appKey />;
  switch (parts[0] ?? "chat") {
    case "knowledge":
      return <KnowledgePage datasetId={parts[1]} tab={parts[2]} />;
    case "apps":
      if (parts[1] && parts[2] === "workflow")
        return (
          <Suspense fallback={<div className="page">{t("Loading the editor…")}</div>}>
            <WorkflowEditor appId={parts[1]} />
          </Suspense>
        );
      if (parts[1] && parts[2] === "logs") return <LogsPage appId={parts[1]} />;
      return <AppsPage appId={parts[1]} />;
    case "keys":
      return <KeysPage currentKeyId={who.keyId} />;
    case "members":
      return <MembersPage who={who} />;
    case "chat":
    default:
      return <ChatPage appId={parts[1] ?? who.appId ?? undefined} chatId={parts[2]} />;
  }
}

/** Sign in with a username and password (a session cookie), or with an API key pasted below them. */
function Login({ onLogin }: { onLogin: (w: Who) => void }) {
  const [value, setValue] = useState("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    const byKey = !!value.trim();
    setKey(value.trim());
    try {
      if (byKey) onLogin(await api<Who>("GET", "/api/v1/whoami"));
      else {
        const signed = await api<{ user: Who; csrfToken: string }>("POST", "/api/support/user/account/loginByPassword", { username: username.trim(), password });
        setCsrf(signed.csrfToken);
        onLogin({ ...signed.user, appId: null });
      }
    } catch (err) {
      setKey("");
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const ready = !!value.trim() || (!!username.trim() && !!password);
  return (
    <div className="login">
      <form className="card login-card" onSubmit={submit}>
        <div className="brand big"><span className="logo">◉</span> {t("Fathom")}</div>
        <label>{t("Username")}
          <input name="username" autoComplete="username" autoFocus value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>{t("Password")}
          <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        <p className="muted small">{t("Knowledge bases, workflows and agents. Paste an API key to sign in; it is kept in this browser only.")}</p>
        <label>{t("API key")}
          <input name="apiKey" type="password" placeholder={t("fathom-…")} value={value} onChange={(e) => setValue(e.target.value)} />
        </label>
        {error && <div className="error">{error}</div>}
        <button className="primary" disabled={!ready || busy}>{busy ? t("Checking…") : t("Sign in")}</button>
        <LangSwitch />
        <p className="muted small">{t("The first start of")} <code>{t("fathom serve")}</code> {t("prints an admin key;")} <code>{t("fathom keys create")}</code> {t("makes more.")}</p>
      </form>
    </div>
  );
}

/** English / 中文, kept in this browser. */
function LangSwitch() {
  const current = lang();
  return (
    <div className="small lang-switch" data-testid="lang-switch">
      <button type="button" className="link" disabled={current === "en"} onClick={() => setLang("en")}>{t("English")}</button> ·{" "}
      <button type="button" className="link" disabled={current === "zh"} onClick={() => setLang("zh")}>中文</button>
    </div>
  );
}
