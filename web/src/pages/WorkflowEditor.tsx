// The visual workflow editor on @xyflow/react: FastGPT's node/edge JSON in and out.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  addEdge, Background, Connection, Controls, Edge, Handle, MiniMap, Node, NodeProps, Position, ReactFlow,
  ReactFlowProvider, useEdgesState, useNodesState, useReactFlow, useStore, useStoreApi,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { api, ApiError } from "../api";
import { AppDetail, getApp, getVersion, publishApp, saveDraft, Version } from "../apps";
import { linkProps, setLeaveGuard } from "../router";
import { FlowEdge, FlowInput, FlowNode, inputLabel, isInternal, makeNode, modelTypeOf, normalizeNode, sourceHandles, TEMPLATES, templateOf } from "../workflow/catalogue";
import { Versions } from "./Apps";
import { Icon } from "../icons";
import { ModelPicker } from "../models";
import { RunPanel } from "../workflow/RunPanel";
import { doubleAnswers, FormFieldsEditor, IfElseEditor } from "../workflow/ControlEditors";
import { nodeName, useEscape } from "../i18n";
import type { Dataset } from "./Knowledge";
import { DatasetName } from "../datasetName";
import { lang, t } from "../lang";
import { Problem, ProblemList, ProblemsContext, useNodeProblems } from "../workflow/Problems";

type Data = { flow: FlowNode; status?: "running" | "done" | "failed" | "skipped" };
type RFNode = Node<Data, "fathom">;
type Graph = { nodes: FlowNode[]; edges: FlowEdge[]; chatConfig: Record<string, any> };
/** A graph as text for comparing with the saved one (run statuses are not part of it). */
const serialize = (g: Graph) => JSON.stringify([g.nodes.map((n) => ({ ...n, position: n.position && { x: Math.round(n.position.x), y: Math.round(n.position.y) } })), g.edges.map((e) => [e.source, e.target, e.sourceHandle, e.targetHandle ?? `${e.target}-target-left`]), g.chatConfig ?? {}]);

const toRF = (n: FlowNode, i: number): RFNode => ({ id: n.nodeId, type: "fathom", position: n.position ?? { x: 120 + 300 * i, y: 120 }, data: { flow: n } });
const edgeId = (e: FlowEdge | Connection) => `${e.sourceHandle}->${e.targetHandle}`;
const toRFEdge = (e: FlowEdge): Edge => ({ id: edgeId(e), source: e.source, target: e.target, sourceHandle: e.sourceHandle, targetHandle: e.targetHandle ?? `${e.target}-target-left` });

/** A handle whose tap connects (tap one, then another) without also selecting its node, which would open
 * the inspector — on a phone a sheet over half the screen — between the two taps. */
function TapHandle(props: React.ComponentProps<typeof Handle>) {
  return <span className="wf-handle-wrap" onClick={(e) => e.stopPropagation()}><Handle {...props} /></span>;
}

function FathomNode({ id, data, selected }: NodeProps<RFNode>) {
  const flow = data.flow;
  const tpl = templateOf(flow.flowNodeType);
  const handles = sourceHandles(flow);
  const visibleInputs = flow.inputs.filter((i) => (!i.renderTypeList?.includes("hidden") || i.key === "system_httpReqUrl") && !isInternal(i, flow.flowNodeType));
  const hasTarget = !["workflowStart", "userGuide", "pluginInput"].includes(flow.flowNodeType);
  const issues = useNodeProblems(id);
  return (
    <div className={`wf-node ${selected ? "selected" : ""} ${data.status ?? ""} ${issues.className}`} title={issues.title || undefined} data-node-type={flow.flowNodeType} data-node-id={id}>
      {hasTarget && <TapHandle type="target" position={Position.Left} id={`${id}-target-left`} style={{ top: 18 }} />}
      <div className="wf-node-head"><span className="wf-icon">{tpl?.icon ?? "·"}</span>{nodeName(flow.name)}{data.status && <span className="grow" />}{data.status && <span className="small muted">{t(data.status)}</span>}</div>
      <div className="wf-node-io">
        <div>{visibleInputs.map((i) => <div key={i.key} className="wf-port">{inputLabel(i, flow.flowNodeType)}{Array.isArray(i.value) && typeof i.value[0] === "string" && i.value.length === 2 ? " ⤶" : ""}</div>)}</div>
        <div>{flow.outputs.map((o) => <div key={o.id} className="wf-port out">{inputLabel({ key: o.key, label: o.label, renderTypeList: [] }, flow.flowNodeType)}</div>)}</div>
      </div>
      {handles.length === 1 && handles[0].id.endsWith("-source-right") ? (
        <TapHandle type="source" position={Position.Right} id={handles[0].id} style={{ top: 18 }} />
      ) : (
        <div style={{ borderTop: "1px solid var(--line)" }}>
          {handles.map((h) => (
            <div key={h.id} className="wf-port out" style={{ position: "relative", padding: "4px 14px" }}>
              {h.label}<TapHandle type="source" position={Position.Right} id={h.id} style={{ top: "50%" }} />
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

const nodeTypes = { fathom: FathomNode };

/** Phone-size screens (the CSS breakpoint): the palette is a collapsible strip, panels a bottom sheet. */
const PHONE = "(max-width: 760px)";
function usePhone(): boolean {
  const [phone, setPhone] = useState(() => window.matchMedia(PHONE).matches);
  useEffect(() => {
    const query = window.matchMedia(PHONE);
    const onChange = () => setPhone(query.matches);
    query.addEventListener("change", onChange);
    return () => query.removeEventListener("change", onChange);
  }, []);
  return phone;
}

export default function WorkflowEditor({ appId }: { appId: string }) {
  return <ReactFlowProvider><Editor appId={appId} /></ReactFlowProvider>;
}

function Editor({ appId }: { appId: string }) {
  const [app, setApp] = useState<AppDetail | null>(null);
  const [nodes, setNodes, onNodesChange] = useNodesState<RFNode>([]);
  const [edges, setEdges, onEdgesChange] = useEdgesState<Edge>([]);
  const [chatConfig, setChatConfig] = useState<Record<string, any>>({});
  const [selected, setSelected] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const [error, setError] = useState("");
  const [problems, setProblems] = useState<Problem[]>([]);
  const [panel, setPanel] = useState<"" | "versions" | "run" | "import" | "settings">("");
  const phone = usePhone();
  // The palette: a column on a desktop, a strip above the canvas on a phone (closed at first there).
  const [paletteOpen, setPaletteOpen] = useState(() => !window.matchMedia(PHONE).matches);
  // The bottom sheet (a phone's inspector and panels): half the editor, or only its title row.
  const [sheetLow, setSheetLow] = useState(false);
  // Tap a handle, then another one, to connect (React Flow's connect-on-click): say what happens next.
  const connecting = useStore((s) => s.connectionClickStartHandle);
  const storeApi = useStoreApi();
  // Handles stay at least 24 px on screen at any zoom (touch targets): their size in flow px grows as the
  // view zooms out (CSS uses --handle on touch screens and phones).
  const zoom = useStore((s) => s.transform[2]);
  const [versionsTick, setVersionsTick] = useState(0);
  const flow = useReactFlow();
  // Undo/redo: snapshots of the graph taken before each change; `saved` is the graph as last saved.
  const past = useRef<Graph[]>([]);
  const future = useRef<Graph[]>([]);
  const lastTag = useRef({ tag: "", at: 0 });
  const [saved, setSaved] = useState<string>("");
  const [, setHistoryTick] = useState(0);

  // The canvas is hidden until its first fit: shown before, its nodes jumped to their fitted places some
  // 50 ms after they appeared, and a click in between landed on the empty pane (seen in CI: a click on a
  // node head that opened no inspector). The nodes need a CSS rule of their own (styles.css: React Flow
  // marks each measured node `visibility: visible`, which a hidden parent does not override).
  const [fitted, setFitted] = useState(false);
  const fit = () => setTimeout(() => {
    void Promise.resolve(flow.fitView({ padding: 0.2, maxZoom: 1, minZoom: window.matchMedia(PHONE).matches ? 0.5 : 0.7 })).finally(() => setFitted(true));
  }, 50);
  const show = (data: Graph) => {
    setNodes(data.nodes.map(toRF));
    setEdges(data.edges.map(toRFEdge));
    setChatConfig(data.chatConfig ?? {});
  };
  const load = (data: { nodes?: FlowNode[]; modules?: FlowNode[]; edges?: FlowEdge[]; chatConfig?: any }, asSaved = false) => {
    const list = data.nodes ?? data.modules ?? [];
    const graph: Graph = { nodes: list.map((n, i) => ({ ...normalizeNode(n), position: toRF(n, i).position })), edges: data.edges ?? [], chatConfig: data.chatConfig ?? {} };
    if (!asSaved) checkpoint("load");
    show(graph);
    if (asSaved) setSaved(serialize(graph));
    fit();
  };
  useEffect(() => { getApp(appId).then((a) => { setApp(a); load(a as any, true); }).catch((e) => setError(e.message)); }, [appId]);

  const current = useCallback((): Graph => ({
    nodes: nodes.map((n) => ({ ...n.data.flow, position: { x: Math.round(n.position.x), y: Math.round(n.position.y) } })),
    edges: edges.map((e) => ({ source: e.source, target: e.target, sourceHandle: e.sourceHandle!, targetHandle: e.targetHandle! })),
    chatConfig,
  }), [nodes, edges, chatConfig]);
  const dirty = !!app && saved !== "" && serialize(current()) !== saved;

  /** Remember the graph before a change; edits of one field within 1.5 s make one undo step. */
  const checkpoint = (tag = "") => {
    const now = Date.now();
    if (tag && tag === lastTag.current.tag && now - lastTag.current.at < 1500) { lastTag.current.at = now; return; }
    lastTag.current = { tag, at: now };
    past.current = [...past.current.slice(-99), current()];
    future.current = [];
    setHistoryTick((t) => t + 1);
  };
  const undo = () => {
    const prev = past.current.pop();
    if (!prev) return;
    future.current.push(current());
    lastTag.current = { tag: "", at: 0 };
    show(prev);
    setHistoryTick((t) => t + 1);
  };
  const redo = () => {
    const next = future.current.pop();
    if (!next) return;
    past.current.push(current());
    lastTag.current = { tag: "", at: 0 };
    show(next);
    setHistoryTick((t) => t + 1);
  };
  const undoRef = useRef({ undo, redo });
  undoRef.current = { undo, redo };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return; // the field's own undo
      if (!(e.ctrlKey || e.metaKey)) return;
      const key = e.key.toLowerCase();
      if (key === "z" && !e.shiftKey) { e.preventDefault(); undoRef.current.undo(); }
      else if ((key === "z" && e.shiftKey) || key === "y") { e.preventDefault(); undoRef.current.redo(); }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  // Leaving with unsaved changes asks first: in-app links, and closing or reloading the tab.
  useEffect(() => {
    if (!dirty) return;
    setLeaveGuard(() => confirm(t("Leave the editor without saving? Your changes to this workflow will be lost.")));
    const onUnload = (e: BeforeUnloadEvent) => { e.preventDefault(); e.returnValue = ""; };
    window.addEventListener("beforeunload", onUnload);
    return () => { setLeaveGuard(null); window.removeEventListener("beforeunload", onUnload); };
  }, [dirty]);

  const onConnect = useCallback((c: Connection) => {
    if (c.source === c.target) return;
    checkpoint("connect");
    setEdges((eds) => addEdge({ ...c, id: edgeId(c) }, eds));
  }, [setEdges, current]);

  const addNode = (type: string) => {
    if (type === "workflowStart" && nodes.some((n) => n.data.flow.flowNodeType === "workflowStart")) { setNote(t("There is already a start node.")); return; }
    // Place it right of the selected (else the right-most) node, so it never covers another one.
    const anchor = nodes.find((n) => n.id === selected) ?? nodes.reduce<RFNode | undefined>((best, n) => (!best || n.position.x > best.position.x ? n : best), undefined);
    const taken = (x: number, y: number) => nodes.some((n) => Math.abs(n.position.x - x) < 200 && Math.abs(n.position.y - y) < 120);
    // On a phone the next node goes below (a column fits the narrow screen), else to the right.
    const below = (a: RFNode) => ({ x: a.position.x, y: a.position.y + (a.measured?.height ?? 140) + 70 });
    let position = anchor ? (phone ? below(anchor) : { x: anchor.position.x + 320, y: anchor.position.y }) : { x: 0, y: 120 };
    while (taken(position.x, position.y)) position = { x: position.x, y: position.y + 160 };
    const node = makeNode(type, position);
    checkpoint("add");
    setNodes((ns) => [...ns.map((n) => ({ ...n, selected: false })), { ...toRF(node, 0), selected: true }]);
    setSelected(node.nodeId);
    setSheetLow(false);
    if (phone) {
      setPaletteOpen(false); // the new node's sheet needs the room; "+ Node" opens the palette again
      setTimeout(() => flow.fitView({ nodes: [{ id: node.nodeId }], padding: 0.3, maxZoom: 1, minZoom: 0.5, duration: 0 }), 60);
    } else setTimeout(() => flow.fitView({ padding: 0.25, maxZoom: 1, minZoom: 0.7, duration: 0 }), 30);
  };

  const updateFlow = (id: string, fn: (f: FlowNode) => FlowNode, tag = "") => { checkpoint(tag ? `${id}:${tag}` : ""); setNodes((ns) => ns.map((n) => (n.id === id ? { ...n, data: { ...n.data, flow: fn(n.data.flow) } } : n))); };
  const removeNode = (id: string) => { checkpoint("remove"); setNodes((ns) => ns.filter((n) => n.id !== id)); setEdges((es) => es.filter((e) => e.source !== id && e.target !== id)); setSelected(null); };

  const save = async (publish: boolean) => {
    setError(""); setNote("");
    try {
      const body = current();
      const checked = await saveDraft(appId, body) as { problems?: Problem[] } | null;
      setSaved(serialize(body));
      setProblems(checked?.problems ?? []);
      if (publish) { const done = await publishApp(appId, body); setProblems(done.problems ?? []); setVersionsTick((t) => t + 1); }
      setNote(publish ? t("Published.") : checked?.problems?.length ? t("Draft saved, with problems to fix before publishing.") : t("Draft saved."));
    } catch (e) {
      // a refused publish lists its problems: the nodes are outlined and the list says what to fix
      if (e instanceof ApiError && Array.isArray(e.data?.problems)) { setProblems(e.data.problems); setError(t("Not published: fix the problems below, then publish again.")); }
      else setError((e as Error).message);
    }
  };
  const exportJson = () => {
    const blob = new Blob([JSON.stringify(current(), null, 2)], { type: "application/json" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${app?.name ?? "workflow"}.json`;
    a.click();
    URL.revokeObjectURL(a.href);
  };
  const loadVersion = async (v: Version) => {
    try { const d = await getVersion(appId, v._id); load(d); setNote(t("Loaded version {name}; save to keep it as the draft.", { name: v.versionName || v._id })); }
    catch (e) { setError((e as Error).message); }
  };
  const setStatuses = (fn: (n: RFNode) => Data["status"]) => setNodes((ns) => ns.map((n) => ({ ...n, data: { ...n.data, status: fn(n) } })));

  const sel = nodes.find((n) => n.id === selected);
  const hasPanel = panel !== "" || !!sel;
  // The canvas changed size (palette toggled; on a phone the sheet opened, closed or moved): fit the view
  // to what is visible — the selected node above an open sheet, else every node.
  const firstLayout = useRef(true);
  useEffect(() => {
    if (firstLayout.current) { firstLayout.current = false; return; }
    const focus = phone && hasPanel && !sheetLow && sel ? [{ id: sel.id }] : undefined;
    const timer = setTimeout(() => flow.fitView({ nodes: focus, padding: focus ? 0.3 : 0.2, maxZoom: 1, minZoom: phone ? 0.5 : 0.7 }), 60);
    return () => clearTimeout(timer);
  }, [paletteOpen, phone && hasPanel, phone && sheetLow]);
  useEffect(() => { if (selected) setSheetLow(false); }, [selected]); // a node tapped: its sheet opens at half
  const handleSize = Math.min(64, Math.max(28, 26 / (zoom || 1)));
  const cancelConnect = () => { if (storeApi.getState().connectionClickStartHandle) storeApi.setState({ connectionClickStartHandle: null }); };
  const panelView = panel === "versions" ? (
    <div className="wf-inspector"><Versions appId={appId} onLoad={loadVersion} refresh={versionsTick} /></div>
  ) : panel === "settings" ? (
    <SettingsPanel chatConfig={chatConfig} onChange={(c) => { checkpoint("settings"); setChatConfig(c); }} onClose={() => setPanel("")} />
  ) : panel === "import" ? (
    <ImportPanel onImport={(d) => { load(d); setPanel(""); setNote(t("Imported; save to keep it.")); }} onClose={() => setPanel("")} />
  ) : panel === "run" ? (
    <RunPanel appId={appId} current={current} setStatuses={setStatuses} nodes={nodes} onClose={() => { setPanel(""); setStatuses(() => undefined); }} />
  ) : sel ? (
    <Inspector key={sel.id} node={sel} nodes={nodes} edges={edges} chatConfig={chatConfig} onChange={(fn, tag) => updateFlow(sel.id, fn, tag)} onDelete={() => removeNode(sel.id)}
      onClose={() => { setNodes((ns) => ns.map((n) => ({ ...n, selected: false }))); setSelected(null); }} />
  ) : (
    <div className="wf-inspector wf-help muted small">
      <b>{t("Workflow editor")}</b>
      <p>{t("Add nodes from the left, drag from a node's right handle to another node's left handle (or tap one handle, then the other) to connect them, and click a node to edit its inputs — including references to outputs of nodes upstream.")}</p>
      <p>{t("Delete a node or edge with the Delete key. Run executes the canvas as it is (no save needed) and lights up each node as it runs.")}</p>
    </div>
  );
  return (
    <div className="wf">
      <div className="wf-bar">
        <a className="small" {...linkProps(`/apps/${appId}`)}>{t("← App")}</a>
        <b>{app?.name ?? "…"}</b><span className="badge">{t("Workflow")}</span>
        <div className="grow" />
        {note && <span className="muted small" data-testid="editor-note">{note}</span>}
        {dirty && <span className="badge" data-testid="unsaved" title={t("Save draft or Publish to keep your changes")}>{t("unsaved")}</span>}
        <button className={paletteOpen ? "active" : ""} data-testid="palette-toggle" aria-expanded={paletteOpen} title={t("Show or hide the node palette")} onClick={() => setPaletteOpen(!paletteOpen)}>{t("+ Node")}</button>
        <button title={t("Undo (Ctrl+Z)")} aria-label="Undo" disabled={!past.current.length} onClick={undo}>↶</button>
        <button title={t("Redo (Ctrl+Shift+Z)")} aria-label="Redo" disabled={!future.current.length} onClick={redo}>↷</button>
        <button onClick={() => setPanel(panel === "import" ? "" : "import")}>{t("Import")}</button>
        <button onClick={exportJson}>{t("Export")}</button>
        <button onClick={() => setPanel(panel === "settings" ? "" : "settings")}>{t("Variables")}</button>
        <button onClick={() => setPanel(panel === "versions" ? "" : "versions")}>{t("Versions")}</button>
        <button onClick={() => save(false)}>{t("Save draft")}</button>
        <button onClick={() => save(true)}>{t("Publish")}</button>
        <button className="primary" onClick={() => setPanel("run")}><Icon name="play" size={12} /> {t("Run")}</button>
      </div>
      {error && <div className="error" style={{ margin: 8 }} data-testid="editor-error">{error}</div>}
      <ProblemList problems={problems} nodes={nodes.map((n) => n.data.flow)} onClose={() => setProblems([])}
        onPick={(id) => { setNodes((ns) => ns.map((n) => ({ ...n, selected: n.id === id }))); setSelected(id); const n = nodes.find((x) => x.id === id); if (n) flow.setCenter(n.position.x + 100, n.position.y + 40, { zoom: 1, duration: 0 }); }} />
      {doubleAnswers(nodes.map((n) => n.data.flow), []).map(({ chat, reply }) => (
        <div key={`${chat.nodeId}-${reply.nodeId}`} className="warn small" data-testid="double-answer" style={{ margin: "4px 8px" }}>
          ⚠ “{nodeName(chat.name)}{t("” already sends its answer to the user, so “")}{nodeName(reply.name)}{t("” replies with it a second time: the user sees the answer twice. Remove the reply, or turn off “Send answer to the user” on")} {nodeName(chat.name)} (internal settings).
        </div>
      ))}
      <div className={`wf-body${paletteOpen ? " palette-open" : ""}`}>
        {paletteOpen && (
          <div className="wf-palette" data-testid="palette">
            <div className="muted small">{t("Add a node")}</div>
            {["Basic", "AI", "Interactive", "Logic", "Tools"].map((g) => (
              <div key={g} className="wf-palette-group">
                <div className="small wf-palette-title">{t(g)}</div>
                {TEMPLATES.filter((tpl) => tpl.group === g).map((tpl) => (
                  <button key={tpl.type} className="small" title={t(tpl.intro)} data-template={tpl.type} onClick={() => addNode(tpl.type)}><span className="wf-icon">{tpl.icon}</span>{nodeName(tpl.name)}</button>
                ))}
              </div>
            ))}
          </div>
        )}
        <div className="wf-canvas" data-fitted={fitted ? "" : undefined} style={{ ["--handle" as string]: `${handleSize}px`, visibility: fitted ? undefined : "hidden" }}>
          <ProblemsContext.Provider value={problems}>
          <ReactFlow
            nodes={nodes} edges={edges} nodeTypes={nodeTypes}
            onNodesChange={onNodesChange} onEdgesChange={onEdgesChange} onConnect={onConnect}
            onNodeDragStart={() => checkpoint("")} onBeforeDelete={async () => { checkpoint(""); return true; }}
            onSelectionChange={({ nodes: s }) => setSelected(s[0]?.id ?? null)} onPaneClick={cancelConnect}
            deleteKeyCode={["Backspace", "Delete"]} defaultEdgeOptions={{ animated: false, style: { strokeWidth: 2 } }}
            proOptions={{ hideAttribution: true }} minZoom={0.2} maxZoom={2}
          >
            <Background gap={18} />
            <Controls />
            {!phone && <MiniMap pannable zoomable style={{ width: 140, height: 90 }} />}
          </ReactFlow>
          </ProblemsContext.Provider>
          {connecting && <div className="wf-connect-hint small" data-testid="connect-hint">{t("Now tap the handle to connect it to (tap the canvas to cancel).")}</div>}
        </div>
        {phone ? (
          hasPanel && (
            <div className={`wf-sheet${sheetLow ? " low" : ""}`} data-testid="sheet">
              <button className="wf-sheet-handle" data-testid="sheet-handle" aria-label={sheetLow ? "Expand" : "Collapse"} title={sheetLow ? t("Expand") : t("Collapse")} onClick={() => setSheetLow(!sheetLow)}><span /></button>
              {panelView}
            </div>
          )
        ) : panelView}
      </div>
    </div>
  );
}

function upstreamOf(id: string, edges: Edge[]): Set<string> {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length) {
    const cur = stack.pop()!;
    for (const e of edges) if (e.target === cur && !seen.has(e.source)) { seen.add(e.source); stack.push(e.source); }
  }
  seen.delete(id);
  return seen;
}

function Inspector({ node, nodes, edges, chatConfig, onChange, onDelete, onClose }: { node: RFNode; nodes: RFNode[]; edges: Edge[]; chatConfig: any; onChange: (fn: (f: FlowNode) => FlowNode, tag?: string) => void; onDelete: () => void; onClose: () => void }) {
  const flow = node.data.flow;
  const [advanced, setAdvanced] = useState(false);
  const internals = flow.inputs.filter((i) => isInternal(i, flow.flowNodeType));
  const upstream = useMemo(() => {
    const ids = upstreamOf(node.id, edges);
    const refs = nodes.filter((n) => ids.has(n.id)).flatMap((n) => n.data.flow.outputs.map((o) => ({ nodeId: n.id, outputId: o.id, label: `${nodeName(n.data.flow.name)} › ${inputLabel({ key: o.key, label: o.label, renderTypeList: [] }, n.data.flow.flowNodeType)}` })));
    for (const v of chatConfig?.variables ?? []) refs.push({ nodeId: "VARIABLE_NODE_ID", outputId: v.key, label: `${t("Variable")} › ${v.label || v.key}` });
    return refs;
  }, [node.id, nodes, edges, chatConfig]);
  const setInput = (key: string, value: unknown) => onChange((f) => ({ ...f, inputs: f.inputs.map((i) => (i.key === key ? { ...i, value } : i)) }), key);
  return (
    <div className="wf-inspector" data-testid="inspector">
      <div className="row"><b><span className="wf-icon">{templateOf(flow.flowNodeType)?.icon}</span> {nodeName(templateOf(flow.flowNodeType)?.name ?? flow.flowNodeType)}</b><div className="grow" /><button className="small danger" onClick={onDelete}>{t("Delete")}</button><button className="small" aria-label="Close" onClick={onClose}>✕</button></div>
      <div className="muted small">{t(templateOf(flow.flowNodeType)?.intro ?? "")} {t("· id")} <code>{flow.nodeId}</code></div>
      <label>{t("Name")}<input value={nodeName(flow.name)} onChange={(e) => onChange((f) => ({ ...f, name: e.target.value }), "name")} /></label>
      {flow.inputs.filter((i) => advanced || !isInternal(i, flow.flowNodeType)).map((input) => <InputEditor key={input.key} input={{ ...input, label: inputLabel(input, flow.flowNodeType) }} upstream={upstream} onChange={(v) => setInput(input.key, v)} />)}
      {internals.length > 0 && (
        <button className="link small" style={{ alignSelf: "flex-start" }} data-testid="advanced-toggle" onClick={() => setAdvanced(!advanced)}>
          {advanced ? t("Hide") : t("Show")} {internals.length} {t("internal setting")}{internals.length === 1 || lang() === "zh" ? "" : "s"} {t("(FastGPT keeps them hidden)")}
        </button>
      )}
      {flow.outputs.length > 0 && (
        <div className="col" style={{ gap: 4 }}>
          <b className="small">{t("Outputs")}</b>
          {flow.outputs.map((o) => <div key={o.id} className="small muted"><code>{o.key}</code> · {o.valueType} — {inputLabel({ key: o.key, label: o.label, renderTypeList: [] }, flow.flowNodeType)}</div>)}
        </div>
      )}
    </div>
  );
}

type Ref = { nodeId: string; outputId: string; label: string };
const isRef = (v: unknown): v is [string, string] => Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string";

function InputEditor({ input, upstream, onChange }: { input: FlowInput; upstream: Ref[]; onChange: (v: unknown) => void }) {
  const types = input.renderTypeList ?? [];
  const canRef = types.includes("reference") || types.includes("settingDatasetQuotePrompt");
  const [mode, setMode] = useState<"value" | "ref">(isRef(input.value) && canRef ? "ref" : types[0] === "reference" ? "ref" : "value");
  const label = <span>{input.label || input.key}{input.required ? " *" : ""}</span>;
  const refSelect = (
    <select data-testid={`ref-${input.key}`} value={isRef(input.value) ? `${input.value[0]}|${input.value[1]}` : ""} onChange={(e) => onChange(e.target.value ? e.target.value.split("|") : undefined)}>
      <option value="">{t("— choose an upstream output —")}</option>
      {upstream.map((r) => <option key={`${r.nodeId}|${r.outputId}`} value={`${r.nodeId}|${r.outputId}`}>{r.label}</option>)}
    </select>
  );
  const header = (
    <div className="row small">{label}<div className="grow" />
      {canRef && types[0] !== "settingDatasetQuotePrompt" && (
        <button className="link small" onClick={() => { const next = mode === "ref" ? "value" : "ref"; setMode(next); if (next === "value" && isRef(input.value)) onChange(""); }}>
          {mode === "ref" ? "type a value" : "use upstream output"}
        </button>
      )}
    </div>
  );
  if (types.includes("settingDatasetQuotePrompt")) return <div className="col" style={{ gap: 4 }}>{header}{refSelect}</div>;
  if (canRef && mode === "ref") return <div className="col" style={{ gap: 4 }}>{header}{refSelect}</div>;
  if (input.key === "userSelectOptions" || input.key === "agents") {
    const opts = (input.value as { key: string; value: string }[]) ?? [];
    return (
      <div className="col" style={{ gap: 4 }}>{header}
        {opts.map((o, i) => (
          <div key={o.key} className="row"><input value={o.value} onChange={(e) => onChange(opts.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)))} /><button className="small" onClick={() => onChange(opts.filter((_, j) => j !== i))}>✕</button></div>
        ))}
        <div><button className="small" onClick={() => onChange([...opts, { key: `option${Date.now().toString(36)}`, value: `Option ${opts.length + 1}` }])}>{t("+ Option")}</button></div>
      </div>
    );
  }
  const picker = modelTypeOf(input);
  if (picker && typeof (input.value ?? "") === "string") return <div className="col" style={{ gap: 4 }}>{header}<ModelPicker type={picker} name={`input-${input.key}`} value={String(input.value ?? "")} onChange={onChange} /></div>;
  if (input.key === "ifElseList") return <IfElseEditor value={(input.value as any[]) ?? []} upstream={upstream} onChange={onChange} header={header} />;
  if (input.key === "userInputForms") return <FormFieldsEditor value={(input.value as any[]) ?? []} onChange={onChange} header={header} />;
  if (input.key === "datasets") return <DatasetPicker value={(input.value as any[]) ?? []} onChange={onChange} header={header} />;
  if (input.list && typeof input.value === "string") {
    return <label>{label}<select value={input.value} onChange={(e) => onChange(e.target.value)}>{input.list.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}</select></label>;
  }
  if (typeof input.value === "boolean" || input.valueType === "boolean") return <label className="inline"><input type="checkbox" checked={!!input.value} onChange={(e) => onChange(e.target.checked)} />{label}</label>;
  if (typeof input.value === "number" || input.valueType === "number" || types.includes("numberInput")) {
    return <div className="col" style={{ gap: 4 }}>{header}<input type="number" value={Number(input.value ?? 0)} step="any" onChange={(e) => onChange(Number(e.target.value))} /></div>;
  }
  if (typeof input.value === "object" && input.value !== null) {
    return <JsonEditor header={header} value={input.value} onChange={onChange} />;
  }
  const insert = (r: Ref) => onChange(`${input.value ?? ""}{{$${r.nodeId}.${r.outputId}$}}`);
  const text = String(input.value ?? "");
  return (
    <div className="col" style={{ gap: 4 }}>{header}
      {types.includes("textarea") || input.key === "code" ? (
        <textarea data-testid={`input-${input.key}`} rows={input.key === "code" ? 8 : 3} value={text} onChange={(e) => onChange(e.target.value)} style={input.key === "code" ? { fontFamily: "monospace", fontSize: 12 } : undefined} />
      ) : (
        <input data-testid={`input-${input.key}`} value={text} onChange={(e) => onChange(e.target.value)} />
      )}
      {upstream.length > 0 && (types.includes("textarea") || types.includes("reference")) && (
        <select value="" onChange={(e) => { const r = upstream.find((x) => `${x.nodeId}|${x.outputId}` === e.target.value); if (r) insert(r); }} className="small">
          <option value="">{t("Insert a variable…")}</option>
          {upstream.map((r) => <option key={`${r.nodeId}|${r.outputId}`} value={`${r.nodeId}|${r.outputId}`}>{r.label}</option>)}
        </select>
      )}
    </div>
  );
}

function JsonEditor({ header, value, onChange }: { header: React.ReactNode; value: unknown; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(JSON.stringify(value, null, 2));
  const [bad, setBad] = useState(false);
  return (
    <div className="col" style={{ gap: 4 }}>{header}
      <textarea rows={5} style={{ fontFamily: "monospace", fontSize: 12, borderColor: bad ? "var(--bad)" : undefined }} value={text}
        onChange={(e) => { setText(e.target.value); try { onChange(JSON.parse(e.target.value)); setBad(false); } catch { setBad(true); } }} />
    </div>
  );
}

function DatasetPicker({ value, onChange, header }: { value: { datasetId: string }[]; onChange: (v: unknown) => void; header: React.ReactNode }) {
  const [all, setAll] = useState<Dataset[]>([]);
  useEffect(() => { api<Dataset[]>("POST", "/api/core/dataset/list", {}).then(setAll).catch(() => setAll([])); }, []);
  const ids = new Set(value.map((v) => v.datasetId));
  return (
    <div className="col" style={{ gap: 4 }}>{header}
      {all.map((d) => (
        <label key={d._id} className="inline" title={d.intro || undefined}><input type="checkbox" checked={ids.has(d._id)} onChange={() => onChange(ids.has(d._id) ? value.filter((v) => v.datasetId !== d._id) : [...value, { datasetId: d._id }])} /><DatasetName dataset={d} all={all} /></label>
      ))}
      {all.length === 0 && <span className="muted small">{t("No knowledge bases.")}</span>}
    </div>
  );
}

function ImportPanel({ onImport, onClose }: { onImport: (d: any) => void; onClose: () => void }) {
  useEscape(onClose);
  const [text, setText] = useState("");
  const [error, setError] = useState("");
  const file = useRef<HTMLInputElement>(null);
  const parse = (raw: string) => {
    try {
      // A plain export ({nodes, edges, chatConfig}) or a FastGPT template file that wraps it
      // ({name, workflow: {...}}{t(", or the API's")} {data: {...}} envelope).
      let d = JSON.parse(raw);
      for (let i = 0; i < 3 && d && !Array.isArray(d.nodes ?? d.modules); i++) d = d.workflow ?? d.data ?? d.template ?? d.appDetail;
      if (!d || typeof d !== "object") throw new Error("no 'nodes' (or 'modules') array: not a FastGPT workflow export");
      const nodes = d.nodes ?? d.modules;
      if (!Array.isArray(nodes)) throw new Error("no 'nodes' (or 'modules') array: not a FastGPT workflow export");
      onImport({ nodes, edges: d.edges ?? [], chatConfig: d.chatConfig ?? {} });
    } catch (e) { setError((e as Error).message); }
  };
  return (
    <div className="wf-inspector">
      <div className="row"><b>{t("Import FastGPT JSON")}</b><div className="grow" /><button className="small" onClick={onClose}>{t("Close")}</button></div>
      <div className="muted small">{t("Paste an exported workflow (")}<code>{t("nodes")}</code>, <code>{t("edges")}</code>, <code>{t("chatConfig")}</code>{t(") or choose a file. It replaces the canvas.")}</div>
      <button onClick={() => file.current?.click()}>{t("Choose file…")}</button>
      <input ref={file} type="file" accept=".json,application/json" hidden onChange={async (e) => { const f = e.target.files?.[0]; if (f) parse(await f.text()); }} />
      <textarea rows={12} value={text} onChange={(e) => setText(e.target.value)} placeholder='{"nodes": [...], "edges": [...], "chatConfig": {...}}' style={{ fontFamily: "monospace", fontSize: 12 }} />
      <button className="primary" disabled={!text.trim()} onClick={() => parse(text)}>{t("Import")}</button>
      {error && <div className="error">{error}</div>}
    </div>
  );
}

type Variable = { key: string; label: string; type: string; required: boolean; valueType?: string; list?: { label: string; value: string }[] };

/** The app's welcome text and global variables (chatConfig), asked in the chat's variables form. */
function SettingsPanel({ chatConfig, onChange, onClose }: { chatConfig: Record<string, any>; onChange: (c: Record<string, any>) => void; onClose: () => void }) {
  useEscape(onClose);
  const vars: Variable[] = chatConfig.variables ?? [];
  const setVars = (next: Variable[]) => onChange({ ...chatConfig, variables: next });
  const edit = (i: number, patch: Partial<Variable>) => setVars(vars.map((v, j) => (j === i ? { ...v, ...patch } : v)));
  return (
    <div className="wf-inspector" data-testid="settings-panel">
      <div className="row"><b>{t("Welcome & variables")}</b><div className="grow" /><button className="small" onClick={onClose}>{t("Close")}</button></div>
      <label>{t("Welcome text")}<textarea rows={2} value={chatConfig.welcomeText ?? ""} onChange={(e) => onChange({ ...chatConfig, welcomeText: e.target.value })} /></label>
      <div className="muted small">{t("Variables are asked in the chat before the first message; nodes read them as")} <code>{"{{key}}"}</code> {t("or as the upstream output “Variable › …”.")}</div>
      {vars.map((v, i) => (
        <div key={i} className="chunk col" style={{ gap: 6 }}>
          <div className="row"><input placeholder={t("key")} value={v.key} onChange={(e) => edit(i, { key: e.target.value })} /><button className="small" onClick={() => setVars(vars.filter((_, j) => j !== i))}>✕</button></div>
          <input placeholder={t("label")} value={v.label} onChange={(e) => edit(i, { label: e.target.value })} />
          <div className="row">
            <select value={v.type} onChange={(e) => edit(i, { type: e.target.value, valueType: e.target.value === "numberInput" ? "number" : "string" })}>
              <option value="input">{t("Text")}</option><option value="textarea">{t("Long text")}</option><option value="numberInput">{t("Number")}</option><option value="select">{t("Choice")}</option>
            </select>
            <label className="inline"><input type="checkbox" checked={v.required} onChange={(e) => edit(i, { required: e.target.checked })} />{t("required")}</label>
          </div>
          {v.type === "select" && (
            <input placeholder={t("choices, comma-separated")} value={(v.list ?? []).map((o) => o.value).join(", ")}
              onChange={(e) => edit(i, { list: e.target.value.split(",").map((x) => x.trim()).filter(Boolean).map((x) => ({ label: x, value: x })) })} />
          )}
        </div>
      ))}
      <div><button className="small" onClick={() => setVars([...vars, { key: `var${vars.length + 1}`, label: "", type: "input", required: false, valueType: "string" }])}>{t("+ Variable")}</button></div>
    </div>
  );
}
