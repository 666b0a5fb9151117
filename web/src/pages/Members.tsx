// Members and accounts: the people of the team and invitation links (owners and admins), your password,
// and the page an invitation link opens (/invite/<token>), where one person sets a name and password.
import { useEffect, useState } from "react";
import { api, fmtTime, publicOrigin, setCsrf, setKey } from "../api";
import { navigate } from "../router";
import { t } from "../lang";

export type Who = { teamId: string; tmbId: string; role: string; appId: string | null; keyId?: string | null; username?: string | null };
type Member = { tmbId: string; memberName: string; username: string | null; role: string; createTime: string };
type Invitation = { _id: string; role: string; expiresAt: string; usedAt: string | null; createTime: string };

export function MembersPage({ who }: { who: Who }) {
  const manages = who.role === "owner" || who.role === "admin";
  return (
    <div className="page">
      <div className="page-head"><div><h1>{t("Members")}</h1><div className="muted">{t("People sign in with a password; programs use API keys.")}</div></div></div>
      {manages && <Team who={who} />}
      {who.username && !who.keyId && <Password />}
    </div>
  );
}

function Team({ who }: { who: Who }) {
  const [members, setMembers] = useState<Member[]>([]);
  const [invitations, setInvitations] = useState<Invitation[]>([]);
  const [role, setRole] = useState("member");
  const [hours, setHours] = useState(72);
  const [link, setLink] = useState("");
  const [error, setError] = useState("");
  const load = () => {
    api<Member[]>("GET", "/api/support/user/team/member/list").then(setMembers).catch((e) => setError(e.message));
    api<Invitation[]>("GET", "/api/support/user/team/invitation/list").then(setInvitations).catch((e) => setError(e.message));
  };
  useEffect(load, []);
  const invite = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    try {
      const made = await api<{ link: string }>("POST", "/api/support/user/team/invitation/create", { role, expiresHours: hours });
      setLink(publicOrigin() + made.link);
      load();
    } catch (err) { setError((err as Error).message); }
  };
  const revoke = async (id: string) => {
    try { await api("DELETE", "/api/support/user/team/invitation/delete", undefined, { id }); load(); }
    catch (err) { setError((err as Error).message); }
  };
  return (
    <>
      {error && <div className="error" style={{ marginBottom: 12 }}>{error}</div>}
      <div className="card col" style={{ marginBottom: 16 }}>
        <h2>{t("Invite someone")}</h2>
        <form className="row wrap" onSubmit={invite}>
          <select name="inviteRole" value={role} onChange={(e) => setRole(e.target.value)} style={{ width: 160 }}>
            <option value="member">{t("member")}</option>
            <option value="admin">{t("admin")}</option>
            {who.role === "owner" && <option value="owner">{t("owner")}</option>}
          </select>
          <label className="row">{t("valid for (hours)")}
            <input name="inviteHours" type="number" min={1} max={720} value={hours} onChange={(e) => setHours(Number(e.target.value))} style={{ width: 90 }} />
          </label>
          <button className="primary">{t("Create invitation link")}</button>
        </form>
        {link && (
          <div className="card col" style={{ background: "#f0fdf4", borderColor: "#bbf7d0" }} data-testid="invite-link">
            <b>{t("Send this link to the person; it works once and is shown only now.")}</b>
            <div className="row wrap"><code style={{ wordBreak: "break-all" }}>{link}</code><button className="small" onClick={() => navigator.clipboard?.writeText(link)}>{t("Copy")}</button></div>
          </div>
        )}
      </div>
      <div className="card col" style={{ marginBottom: 16 }}>
        <h2>{t("Members")}</h2>
        <div className="table-wrap"><table data-testid="members">
          <thead><tr><th>{t("Username")}</th><th>{t("Role")}</th><th>{t("Joined")}</th></tr></thead>
          <tbody>{members.map((m) => <tr key={m.tmbId}><td>{m.username ?? <span className="muted">{m.memberName} ({t("no password")})</span>}</td><td>{m.role}</td><td>{fmtTime(m.createTime)}</td></tr>)}</tbody>
        </table></div>
        {invitations.length > 0 && <>
          <h2>{t("Invitation links")}</h2>
          <div className="table-wrap"><table data-testid="invitations">
            <thead><tr><th>{t("Role")}</th><th>{t("Expires")}</th><th>{t("Used")}</th><th /></tr></thead>
            <tbody>{invitations.map((i) => <tr key={i._id}><td>{i.role}</td><td>{fmtTime(i.expiresAt)}</td><td>{i.usedAt ? fmtTime(i.usedAt) : "—"}</td><td>{!i.usedAt && <button className="small" onClick={() => revoke(i._id)}>{t("Revoke")}</button>}</td></tr>)}</tbody>
          </table></div>
        </>}
      </div>
    </>
  );
}

function Password() {
  const [old, setOld] = useState("");
  const [next, setNext] = useState("");
  const [note, setNote] = useState("");
  const [error, setError] = useState("");
  const change = async (e: React.FormEvent) => {
    e.preventDefault();
    setError("");
    setNote("");
    try {
      await api("POST", "/api/support/user/account/updatePasswordByOld", { oldPsw: old, newPsw: next });
      setOld("");
      setNext("");
      setNote(t("Password changed; your other sessions were signed out."));
    } catch (err) { setError((err as Error).message); }
  };
  return (
    <div className="card col">
      <h2>{t("Your password")}</h2>
      <form className="row wrap" onSubmit={change}>
        <input name="oldPassword" type="password" autoComplete="current-password" placeholder={t("Current password")} value={old} onChange={(e) => setOld(e.target.value)} />
        <input name="newPassword" type="password" autoComplete="new-password" placeholder={t("New password (8 characters or more)")} value={next} onChange={(e) => setNext(e.target.value)} />
        <button className="primary" disabled={!old || next.length < 8}>{t("Change password")}</button>
      </form>
      {error && <div className="error">{error}</div>}
      {note && <div className="muted">{note}</div>}
    </div>
  );
}

/** /invite/<token>: choose a username and password, join the team and sign in. */
export function InvitePage({ token, onLogin }: { token: string; onLogin: (w: Who) => void }) {
  const [info, setInfo] = useState<{ teamName: string; role: string; expiresAt: string } | null>(null);
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<{ teamName: string; role: string; expiresAt: string }>("GET", "/api/support/user/team/invitation/info", undefined, { token })
      .then(setInfo).catch((e) => setError(e.message));
  }, [token]);
  const join = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      setKey("");
      const signed = await api<{ user: Who; csrfToken: string }>("POST", "/api/support/user/team/invitation/accept", { token, username: username.trim(), password });
      setCsrf(signed.csrfToken);
      navigate("/chat");
      onLogin({ ...signed.user, appId: null });
    } catch (err) { setError((err as Error).message); } finally { setBusy(false); }
  };
  return (
    <div className="login">
      <form className="card login-card" onSubmit={join} data-testid="invite">
        <div className="brand big"><span className="logo">◉</span> Fathom</div>
        {info && <p>{t("You are invited to {team} as {role}. Choose a username and a password.", { team: info.teamName, role: info.role })}</p>}
        <label>{t("Username")}
          <input name="username" autoComplete="username" autoFocus value={username} onChange={(e) => setUsername(e.target.value)} />
        </label>
        <label>{t("Password")}
          <input name="password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
        {error && <div className="error">{error}</div>}
        <button className="primary" disabled={!info || !username.trim() || password.length < 8 || busy}>{t("Join")}</button>
      </form>
    </div>
  );
}
