// The fleet page in the browser: the fleet, a cluster and the rollout, read from the read-only API and kept live by its
// event stream. Every text from the API is rendered as text (preact escapes it); the token lives in sessionStorage
// only.
import { html } from "htm/preact";
import { render } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

// ---- the API ----

const TOKEN_KEY = "vc-fleet-token";

/** An answer of the API other than 2xx: its status and message. */
class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

function headers(): Record<string, string> {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: headers(), cache: "no-store", credentials: "omit" });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { error: text };
  }
  if (!res.ok) throw new ApiError(res.status, (body as { error?: string } | null)?.error ?? res.statusText);
  return body as T;
}

// ---- shapes of the API (docs/ui.md) ----

interface Wave {
  name: string;
  index: number;
  of: number;
  state: string;
}

interface Row {
  name: string;
  namespace: string;
  controlPlane: string;
  ready: string;
  lastAppliedRevision?: string;
  lastAppliedBy?: string;
  lastAppliedTime?: string;
  commit?: { subject: string; author: string; time: string };
  result?: string;
  drift: string;
  driftObjects?: number;
  source: string;
  health: string;
  healthReason?: string;
  labels: Record<string, string>;
  wave?: Wave;
  note?: string;
}

interface Summary {
  served: { by: string; target: string; repository?: string };
  clusters: number;
  health: Record<string, number>;
  result: Record<string, number>;
  drift: Record<string, number>;
  progress?: {
    revision?: string;
    fetchedAt?: string;
    pass?: { kind: string; since: string; settled: number };
    queue: { full: boolean; changes: string[]; retry: string[] };
    lastPass?: { kind: string; revision: string; ended: string; clusters: number; problems: number };
    error?: string;
  };
  rollout?: {
    id: string;
    phase: string;
    wave: { index: number; name: string | null; of: number } | null;
    message: string;
  };
  updated: string;
  notes: string[];
}

interface Page {
  items: Row[];
  matched: number;
  total: number;
  next?: string;
}

interface Reconciliation {
  revision: string;
  time: string;
  durationMs: number;
  result: string;
  counts: Record<string, number>;
  message?: string;
  via?: string;
  by?: string;
  health?: string;
  healthReason?: string;
}

interface Detail {
  cluster: Row;
  status?: { result?: string; message?: string; history: Reconciliation[]; suspendedBy?: string };
  objects?: Array<{ object: string; status: string; reason?: string }>;
  objectsNote?: string;
  diff?: {
    at: string;
    blocked?: string;
    changes: Array<{ action: string; kind: string; namespace?: string; name: string; change: string }>;
  };
  commits: Record<string, { subject: string; author: string; time: string }>;
}

interface RolloutView {
  id: string;
  phase: string;
  message: string;
  started: string;
  to: { digest: string; revision?: string };
  wave: { index: number; name: string | null; of: number } | null;
  waves: Array<{
    name: string;
    state: string;
    count: number;
    moved: number;
    healthy: number;
    clusters: Array<{ name: string; base: string; health: string | null; reason?: string }>;
  }>;
}

// ---- navigation ----

function navigate(to: string): void {
  history.pushState(null, "", to);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** A link inside the page: followed without a reload. */
function Link(props: { href: string; children?: unknown; class?: string }) {
  const click = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return html`<a href=${props.href} class=${props.class} onClick=${click}>${props.children}</a>`;
}

const clusterHref = (name: string) => `/clusters/${encodeURIComponent(name)}`;
const short = (rev?: string) => (rev ? rev.replace(/^([0-9a-f]{12})[0-9a-f]*/, "$1") : "-");

function useLocation(): { path: string; search: string } {
  const [loc, setLoc] = useState({ path: location.pathname, search: location.search });
  useEffect(() => {
    const on = () => setLoc({ path: location.pathname, search: location.search });
    addEventListener("popstate", on);
    return () => removeEventListener("popstate", on);
  }, []);
  return loc;
}

// ---- the live stream: SSE read with fetch (so that the token goes in a header, never in the URL) ----
// One tab of the page's origin reads the stream (it holds a Web Lock) and passes each event to the others on a
// BroadcastChannel: a browser keeps 6 connections to a host, and tabs each holding a stream would use them all up.

type Listener = (type: string, data: unknown) => void;
const listeners = new Set<Listener>();
let streamState = "connecting";
const stateListeners = new Set<(s: string) => void>();
const channel = typeof BroadcastChannel === "undefined" ? undefined : new BroadcastChannel("vc-fleet-events");

function showState(s: string): void {
  streamState = s;
  for (const l of stateListeners) l(s);
}

function setStreamState(s: string): void {
  showState(s);
  channel?.postMessage({ state: s });
}

function deliver(type: string, data: unknown): void {
  for (const l of listeners) l(type, data);
  channel?.postMessage({ type, data });
}

if (channel)
  channel.onmessage = (m: MessageEvent<{ state?: string; type?: string; data?: unknown }>) => {
    if (m.data.state) showState(m.data.state);
    else if (m.data.type) {
      showState("live");
      for (const l of listeners) l(m.data.type, m.data.data);
    }
  };

/** Reads the stream in the one tab that holds the lock; the others hear it through the channel. */
async function stream(): Promise<void> {
  if (!navigator.locks || !channel) return runStream();
  showState("shared");
  await navigator.locks.request("vc-fleet-stream", () => runStream());
}

async function runStream(): Promise<void> {
  let lastId = "";
  let delay = 1000;
  for (;;) {
    try {
      const res = await fetch("/api/v1/events", {
        headers: { ...headers(), Accept: "text/event-stream", ...(lastId ? { "Last-Event-ID": lastId } : {}) },
        cache: "no-store",
        credentials: "omit",
      });
      if (res.status === 401 || res.status === 403) {
        setStreamState("refused");
        await new Promise((r) => setTimeout(r, 5000));
        continue;
      }
      if (!res.ok || !res.body) throw new Error(`stream: ${res.status}`);
      setStreamState("live");
      delay = 1000;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let end = buf.indexOf("\n\n");
        while (end >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          end = buf.indexOf("\n\n");
          let type = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) lastId = line.slice(4);
            else if (line.startsWith("event: ")) type = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (!data) continue;
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(data);
          } catch {
            continue;
          }
          deliver(type, parsed);
        }
      }
    } catch {
      // dropped: reconnect below, and catch up from the last event seen
    }
    setStreamState("reconnecting");
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 15000);
  }
}

/** Calls `reload` (at most twice a second) whenever the stream says something that `wants` cares about. */
function useLive(reload: () => void, wants: (type: string, data: unknown) => boolean): void {
  const ref = useRef({ reload, wants });
  ref.current = { reload, wants };
  useEffect(() => {
    let timer: number | undefined;
    const l: Listener = (type, data) => {
      if (type !== "reset" && type !== "hello" && !ref.current.wants(type, data)) return;
      if (timer !== undefined) return;
      timer = window.setTimeout(() => {
        timer = undefined;
        ref.current.reload();
      }, 500);
    };
    listeners.add(l);
    return () => {
      listeners.delete(l);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);
}

function StreamBadge() {
  const [s, setS] = useState(streamState);
  useEffect(() => {
    stateListeners.add(setS);
    return () => void stateListeners.delete(setS);
  }, []);
  return html`<span class=${`badge stream-${s}`} title="updates from the server's event stream">${s}</span>`;
}

// ---- pieces ----

function Health(props: { status: string; reason?: string }) {
  return html`<span class=${`health health-${props.status}`}>${props.status}</span>${
    props.reason ? html` <span class="reason">${props.reason}</span>` : null
  }`;
}

/** A commit's subject and author. */
function Commit(props: { c: { subject: string; author: string } }) {
  return html`<span class="subject">${props.c.subject}</span>${" "}<span class="author">${props.c.author}</span>`;
}

/** Why a plan is blocked, when it is. */
function Blocked(props: { text?: string }) {
  return props.text ? html`${" "}<span class="problem-inline">${props.text}</span>` : null;
}

const passText = (p: { kind: string; since: string; settled: number }) =>
  `pass in flight: ${p.kind} since ${p.since}, ${p.settled} settled`;
const changeText = (c: { kind: string; namespace?: string; name: string; change: string }) =>
  ` ${c.kind} ${c.namespace ? `${c.namespace}/` : ""}${c.name}: ${c.change}`;
const memberText = (c: { base: string; health: string | null }) => ` at ${c.base} base: ${c.health ?? "not moved"}`;
const fetched = (at?: string) => (at ? `, fetched ${at}` : "");
const waveText = (w: Wave) => `${w.name} (${w.index + 1}/${w.of}, ${w.state}) `;

function lastPassText(l: {
  kind: string;
  revision: string;
  clusters: number;
  problems: number;
  ended: string;
}): string {
  const counts = `${l.clusters} clusters, ${l.problems} problems`;
  return `last pass: ${l.kind} at ${short(l.revision)}, ${counts}, ended ${l.ended}`;
}

function Labels(props: { labels: Record<string, string> }) {
  return html`${Object.entries(props.labels).map(([k, v]) => html`<span class="label">${k}=${v}</span> `)}`;
}

function Drift(props: { row: Row }) {
  const r = props.row;
  const text =
    r.drift === "no"
      ? "in sync"
      : r.drift === "yes"
        ? `${r.driftObjects ?? "some"} object${r.driftObjects === 1 ? "" : "s"} differ`
        : r.drift === "-"
          ? "not compared"
          : r.drift;
  return html`<span class=${`drift drift-${r.drift === "-" ? "none" : r.drift}`}>${text}</span>`;
}

function Problem(props: { error: unknown }) {
  const e = props.error;
  if (e instanceof ApiError && e.status === 403)
    return html`<div class="problem" role="alert">
      <h2>Not allowed</h2>
      <p>The server accepted your token, but it may not read this fleet: ${e.message}</p>
      <p>Ask for a role that allows it (docs/ui.md names the verb and resource), or use another token.</p>
      <button onClick=${signOut}>Use another token</button>
    </div>`;
  const message = String((e as Error).message ?? e);
  return html`<div class="problem" role="alert"><h2>Cannot read the fleet</h2><p>${message}</p></div>`;
}

function signOut(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  location.reload();
}

function Login(props: { message: string }) {
  const [value, setValue] = useState("");
  const submit = (e: Event) => {
    e.preventDefault();
    if (!value.trim()) return;
    sessionStorage.setItem(TOKEN_KEY, value.trim());
    location.reload();
  };
  return html`<form class="login" onSubmit=${submit}>
    <h2>Sign in with a bearer token</h2>
    <p>This fleet page asks the Kubernetes API server who you are and whether you may read vc's records.</p>
    <p>${props.message}</p>
    <p>Create a token, for example <code>kubectl create token YOUR-SERVICE-ACCOUNT -n NAMESPACE</code>, and paste it
      here. It is kept in this tab's session storage only, and sent in the Authorization header.</p>
    <label>Token <input type="password" name="token" autocomplete="off" value=${value}
      onInput=${(e: Event) => setValue((e.target as HTMLInputElement).value)} /></label>
    <button type="submit">Sign in</button>
  </form>`;
}

/** Loads data with `load`, reloading it when told; shows a sign-in form on 401 and a message on other errors. */
function useData<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: unknown; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  const seq = useRef(0);
  const reload = useCallback(() => {
    const n = ++seq.current;
    load().then(
      (data) => n === seq.current && setState({ data }),
      (error: unknown) => n === seq.current && setState((s) => ({ ...s, error })),
    );
  }, deps);
  useEffect(() => {
    setState({});
    reload();
  }, deps);
  return { ...state, reload };
}

// ---- the fleet ----

const HEALTHS = ["Degraded", "Progressing", "Unknown", "Healthy"];
const SORTS: Array<[string, string]> = [
  ["name", "name"],
  ["health", "health (worst first)"],
  ["drift", "drift (most first)"],
  ["applied", "last applied"],
  ["result", "result"],
  ["wave", "wave"],
  ["namespace", "namespace"],
];

function FleetHeader(props: { s: Summary; setFilter: (k: string, v: string) => void }) {
  const s = props.s;
  const p = s.progress;
  return html`<section class="summary" aria-label="fleet summary">
    <div class="counts">
      <span class="total">${s.clusters} clusters</span>
      ${HEALTHS.map(
        (h) => html`<button class=${`count health-${h}`} onClick=${() => props.setFilter("health", h)}
          title=${`show the ${h} clusters`}>${h} <b>${s.health[h] ?? 0}</b></button>`,
      )}
    </div>
    <div class="facts">
      <span>results: ${
        Object.entries(s.result)
          .map(([k, v]) => `${v} ${k}`)
          .join(", ") || "none"
      }</span>
      <span>drift: ${
        Object.entries(s.drift)
          .map(([k, v]) => `${v} ${k === "no" ? "in sync" : k === "yes" ? "differ" : k === "-" ? "not compared" : k}`)
          .join(", ") || "none"
      }</span>
    </div>
    <div class="facts">
      <span>served by ${s.served.by} from ${s.served.target}</span>
      ${p?.revision ? html`<span>following <code>${short(p.revision)}</code>${fetched(p.fetchedAt)}</span>` : null}
      ${p?.pass ? html`<span class="pass">${passText(p.pass)}</span>` : null}
      ${
        p && (p.queue.full || p.queue.changes.length || p.queue.retry.length)
          ? html`<span class="queue">queued: ${[
              p.queue.full ? "a full resync" : "",
              p.queue.changes.length ? `changes to ${p.queue.changes.join(", ")}` : "",
              p.queue.retry.length ? `retry of ${p.queue.retry.join(", ")}` : "",
            ]
              .filter(Boolean)
              .join("; ")}</span>`
          : null
      }
      ${p?.lastPass ? html`<span>${lastPassText(p.lastPass)}</span>` : null}
      ${p?.error ? html`<span class="problem-inline">${p.error}</span>` : null}
    </div>
    ${
      s.rollout
        ? html`<div class="rollout-line">rollout ${s.rollout.id}: <b>${s.rollout.phase}</b>${
            s.rollout.wave ? `, wave ${s.rollout.wave.index + 1}/${s.rollout.wave.of} (${s.rollout.wave.name})` : ""
          } — ${s.rollout.message} <${Link} href="/rollout">see the waves</${Link}></div>`
        : null
    }
    ${s.notes.map((n) => html`<div class="note">${n}</div>`)}
  </section>`;
}

function Fleet(props: { search: string }) {
  const params = new URLSearchParams(props.search);
  const [text, setText] = useState(params.get("q") ?? "");
  const [label, setLabel] = useState(params.get("label") ?? "");
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  useEffect(() => {
    setText(params.get("q") ?? "");
    setLabel(params.get("label") ?? "");
    setCursors([]);
  }, [props.search]);
  const setFilter = (k: string, v: string) => {
    const p = new URLSearchParams(location.search);
    if (v) p.set(k, v);
    else p.delete(k);
    const qs = p.toString();
    navigate(qs ? `/?${qs}` : "/");
  };
  const summary = useData(() => api<Summary>("/api/v1/fleet"), []);
  const query = new URLSearchParams(props.search);
  if (cursor) query.set("cursor", cursor);
  const page = useData(() => api<Page>(`/api/v1/clusters?${query.toString()}`), [props.search, cursor]);
  useLive(
    () => {
      summary.reload();
      page.reload();
    },
    () => true,
  );
  // Typing filters after a pause, as a person types.
  useEffect(() => {
    const t = setTimeout(() => {
      if (text !== (params.get("q") ?? "")) setFilter("q", text);
    }, 300);
    return () => clearTimeout(t);
  }, [text]);
  const error = page.error ?? summary.error;
  if (error instanceof ApiError && error.status === 401) return html`<${Login} message=${error.message} />`;
  return html`
    ${summary.data ? html`<${FleetHeader} s=${summary.data} setFilter=${setFilter} />` : null}
    ${error ? html`<${Problem} error=${error} />` : null}
    <form class="filters" role="search" onSubmit=${(e: Event) => {
      e.preventDefault();
      setFilter("label", label);
    }}>
      <label>Find <input type="search" name="q" placeholder="name, label, reason, commit, author…" value=${text}
        onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></label>
      <label>Labels <input name="label" placeholder="tier=prod,canary" value=${label}
        onInput=${(e: Event) => setLabel((e.target as HTMLInputElement).value)}
        onChange=${(e: Event) => setFilter("label", (e.target as HTMLInputElement).value)} /></label>
      <label>Health <select name="health" value=${params.get("health") ?? ""}
        onChange=${(e: Event) => setFilter("health", (e.target as HTMLSelectElement).value)}>
        <option value="">any</option>
        ${HEALTHS.map((h) => html`<option value=${h}>${h}</option>`)}
      </select></label>
      <label>Sort <select name="sort" value=${params.get("sort") ?? "name"}
        onChange=${(e: Event) => setFilter("sort", (e.target as HTMLSelectElement).value)}>
        ${SORTS.map(([v, t]) => html`<option value=${v}>${t}</option>`)}
      </select></label>
      <label><input type="checkbox" name="desc" checked=${params.get("order") === "desc"}
        onChange=${(e: Event) => setFilter("order", (e.target as HTMLInputElement).checked ? "desc" : "")} />
        descending</label>
      ${
        params.get("revision")
          ? html`<span class="chip">applied revision ${params.get("revision")}
        <button type="button" onClick=${() => setFilter("revision", "")} aria-label="clear">×</button></span>`
          : null
      }
      ${
        params.get("wave")
          ? html`<span class="chip">wave ${params.get("wave")}
        <button type="button" onClick=${() => setFilter("wave", "")} aria-label="clear">×</button></span>`
          : null
      }
      ${props.search ? html`<${Link} href="/">clear filters</${Link}>` : null}
    </form>
    ${
      page.data
        ? html`<${ClusterTable} page=${page.data} setFilter=${setFilter} />`
        : error
          ? null
          : html`<p class="loading">Loading…</p>`
    }
    ${
      page.data
        ? html`<nav class="pager">
        ${cursors.length ? html`<button onClick=${() => setCursors(cursors.slice(0, -1))}>Previous</button>` : null}
        ${
          page.data.next
            ? html`<button onClick=${() => setCursors([...cursors, page.data!.next!])}>Next</button>`
            : null
        }
      </nav>`
        : null
    }`;
}

function ClusterTable(props: { page: Page; setFilter: (k: string, v: string) => void }) {
  const p = props.page;
  const showing = p.items.length < p.matched ? `; showing ${p.items.length}` : "";
  return html`<p class="matched">${p.matched} of ${p.total} clusters match${showing}</p>
  <table class="clusters">
    <thead><tr>
      <th>Cluster</th><th>Namespace</th><th>Labels</th><th>Health</th><th>Last applied</th><th>Applied by</th>
      <th>Result</th><th>Drift</th><th>Wave</th>
    </tr></thead>
    <tbody>
      ${p.items.map(
        (r) => html`<tr data-cluster=${r.name}>
          <td><${Link} href=${clusterHref(r.name)}>${r.name}</${Link}></td>
          <td>${r.namespace}</td>
          <td><${Labels} labels=${r.labels} /></td>
          <td><${Health} status=${r.health} reason=${r.healthReason} /></td>
          <td>${
            r.lastAppliedRevision
              ? html`<button class="linkish" title="clusters at this revision"
                  onClick=${() => props.setFilter("revision", r.lastAppliedRevision!.slice(0, 12))}>
                  <code>${short(r.lastAppliedRevision)}</code></button>
                ${r.commit ? html`${" "}<${Commit} c=${r.commit} />` : null}`
              : "-"
          }</td>
          <td>${r.lastAppliedBy ?? "-"}</td>
          <td>${r.result ?? "-"}${r.note ? html`<div class="reason note-inline">${r.note}</div>` : null}</td>
          <td><${Drift} row=${r} /></td>
          <td>${
            r.wave
              ? html`<button class="linkish" onClick=${() => props.setFilter("wave", r.wave!.name)}>
                  ${`${r.wave.name} (${r.wave.state})`}</button>`
              : "-"
          }</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

// ---- a cluster ----

function Cluster(props: { name: string }) {
  const d = useData(() => api<Detail>(`/api/v1/clusters/${encodeURIComponent(props.name)}`), [props.name]);
  const [doctor, setDoctor] = useState<{ data?: unknown; error?: unknown; running?: boolean }>({});
  useLive(d.reload, (type, data) =>
    type === "cluster" ? (data as { row: Row }).row.name === props.name : type === "removed",
  );
  if (d.error instanceof ApiError && d.error.status === 401) return html`<${Login} message=${d.error.message} />`;
  if (d.error) return html`<${Problem} error=${d.error} />`;
  if (!d.data) return html`<p class="loading">Loading ${props.name}…</p>`;
  const { cluster: r, status, objects, diff, commits } = d.data;
  const runDoctor = () => {
    setDoctor({ running: true });
    api<unknown>(`/api/v1/clusters/${encodeURIComponent(props.name)}/doctor`).then(
      (data) => setDoctor({ data }),
      (error: unknown) => setDoctor({ error }),
    );
  };
  const findings = (
    doctor.data as { findings?: Array<{ severity: string; check?: string; message: string }> } | undefined
  )?.findings;
  return html`<article class="cluster">
    <h2>${r.name}</h2>
    <dl>
      <dt>Host namespace</dt><dd>${r.namespace}</dd>
      <dt>Labels</dt><dd><${Labels} labels=${r.labels} /></dd>
      <dt>Health</dt><dd><${Health} status=${r.health} reason=${r.healthReason} /></dd>
      <dt>Last applied</dt><dd>${r.lastAppliedRevision ? html`<code>${r.lastAppliedRevision}</code>` : "-"}
        ${r.commit ? html` <span class="subject">${r.commit.subject}</span> by ${r.commit.author}` : null}
        ${r.lastAppliedTime ? html` at ${r.lastAppliedTime}` : null}</dd>
      <dt>Applied by</dt><dd>${r.lastAppliedBy ?? "-"}</dd>
      <dt>Result</dt><dd>${r.result ?? "-"}${
        status?.message ? html`${" "}<span class="reason">${status.message}</span>` : null
      }</dd>
      <dt>Drift</dt><dd><${Drift} row=${r} /></dd>
      <dt>Wave</dt><dd>${
        r.wave ? html`${waveText(r.wave)}<${Link} href="/rollout">rollout</${Link}>` : "not in a rollout"
      }</dd>
      ${status?.suspendedBy ? html`<dt>Suspended by</dt><dd>${status.suspendedBy}</dd>` : null}
      ${r.note ? html`<dt>Note</dt><dd>${r.note}</dd>` : null}
    </dl>
    <h3>Objects</h3>
    ${
      objects
        ? html`<table class="objects"><thead><tr><th>Object</th><th>Health</th></tr></thead><tbody>
        ${objects.map(
          (o) => html`<tr><td>${o.object}</td><td><${Health} status=${o.status} reason=${o.reason} /></td></tr>`,
        )}
      </tbody></table>`
        : html`<p class="note">${d.data.objectsNote ?? "not read"}</p>`
    }
    <h3>Last diff</h3>
    ${
      diff
        ? diff.changes.length === 0
          ? html`<p>in sync at ${diff.at}<${Blocked} text=${diff.blocked} /></p>`
          : html`<p>${diff.changes.length} object(s) differ (${diff.at})<${Blocked} text=${diff.blocked} /></p>
            <ul class="changes">${diff.changes.map((c) => html`<li><b>${c.action}</b>${changeText(c)}</li>`)}</ul>`
        : html`<p class="note">no plan</p>`
    }
    <h3>History</h3>
    ${
      status?.history.length
        ? html`<table class="history"><thead><tr>
          <th>Revision</th><th>Commit</th><th>Result</th><th>By</th><th>When</th><th>Health</th><th>Message</th>
        </tr></thead><tbody>
        ${status.history.map(
          (h) => html`<tr>
            <td><code>${short(h.revision)}</code></td>
            <td>${commits[h.revision] ? html`<${Commit} c=${commits[h.revision]} />` : "-"}</td>
            <td>${h.result}</td>
            <td>${h.via ? `${h.by ?? "unknown user"} (vc ${h.via})` : "reconciler"}</td>
            <td>${h.time}</td>
            <td>${h.health ? html`<${Health} status=${h.health} reason=${h.healthReason} />` : "-"}</td>
            <td>${h.message ?? ""}</td>
          </tr>`,
        )}
      </tbody></table>`
        : html`<p class="note">no reconciliation recorded</p>`
    }
    <h3>Doctor</h3>
    ${
      doctor.running
        ? html`<p class="loading">vc doctor is checking ${r.name}…</p>`
        : doctor.error
          ? html`<p class="problem-inline">${String((doctor.error as Error).message)}</p>`
          : findings
            ? findings.length
              ? html`<ul class="findings">${findings.map(
                  (f) => html`<li class=${`sev-${f.severity}`}><b>${f.severity}</b>${` ${f.message}`}</li>`,
                )}</ul>`
              : html`<p>no findings</p>`
            : html`<button onClick=${runDoctor}>Run vc doctor</button>`
    }
  </article>`;
}

// ---- the rollout ----

function Rollout() {
  const d = useData(() => api<RolloutView | null>("/api/v1/rollout"), []);
  useLive(d.reload, (type) => type === "fleet");
  if (d.error instanceof ApiError && d.error.status === 401) return html`<${Login} message=${d.error.message} />`;
  if (d.error) return html`<${Problem} error=${d.error} />`;
  if (d.data === undefined) return html`<p class="loading">Loading the rollout…</p>`;
  const r = d.data;
  if (!r) return html`<p>No rollout: every cluster is at the newest fleet base.</p>`;
  return html`<article class="rollout">
    <h2>Rollout ${r.id}: ${r.phase}</h2>
    <p>${r.wave ? `wave ${r.wave.index + 1} of ${r.wave.of} (${r.wave.name})` : "no waves"}; started ${r.started};
      to base <code>${r.to.digest.slice(0, 12)}</code>${
        r.to.revision ? html`${" (revision "}<code>${short(r.to.revision)}</code>)` : null
      }</p>
    <p class="message">${r.message}</p>
    ${r.waves.map(
      (w) => html`<section class=${`wave wave-${w.state}`} data-wave=${w.name}>
        <h3>${w.name} <span class="badge">${w.state}</span></h3>
        <p>${`${w.count} clusters, ${w.moved} moved, ${w.healthy} healthy`}
          (the gate passes when every moved cluster is Healthy)</p>
        <details><summary>clusters</summary><ul>${w.clusters.map(
          (c) =>
            html`<li><${Link} href=${clusterHref(c.name)}>${c.name}</${Link}>${memberText(c)}${
              c.reason ? html` <span class="reason">${c.reason}</span>` : null
            }</li>`,
        )}</ul></details>
      </section>`,
    )}
  </article>`;
}

// ---- the page ----

function App() {
  const loc = useLocation();
  const m = /^\/clusters\/([^/]+)$/.exec(loc.path);
  const view = m
    ? html`<${Cluster} name=${decodeURIComponent(m[1]!)} />`
    : loc.path === "/rollout"
      ? html`<${Rollout} />`
      : html`<${Fleet} search=${loc.search} />`;
  return html`<header class="top">
      <h1><${Link} href="/">vc fleet</${Link}></h1>
      <nav><${Link} href="/">Clusters</${Link}> <${Link} href="/rollout">Rollout</${Link}></nav>
      <${StreamBadge} />
      ${token() ? html`<button class="signout" onClick=${signOut}>Sign out</button>` : null}
    </header>
    <main>${view}</main>`;
}

const root = document.getElementById("app")!;
root.textContent = ""; // the shell's "Loading" line
render(html`<${App} />`, root);
void stream();
