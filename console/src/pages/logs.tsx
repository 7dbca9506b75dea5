// Request logs (stored, within REQUEST_LOGS_TTL): filtered by key, status and path, paged; and for
// root the live log of every process (the access log through GET /api/admin/logs/live).
import { useEffect, useRef, useState } from 'preact/hooks';
import { API, api, type LogRow, type Me } from '../api.js';
import { ErrorLine, when } from '../ui.js';

interface Live { time: string; ip: string; method: string; path: string; status: number; ms: number }
const MAX_LIVE = 200;

function LiveLog() {
  const [lines, setLines] = useState<Live[]>([]);
  const [state, setState] = useState('connecting');
  const source = useRef<EventSource | null>(null);
  useEffect(() => {
    const es = new EventSource(`${API}/logs/live`, { withCredentials: true });
    source.current = es;
    es.onopen = () => setState('live');
    es.onerror = () => setState('reconnecting');
    es.addEventListener('error', (e) => {
      const data = (e as MessageEvent).data;
      if (typeof data === 'string') { setState(`refused: ${data}`); es.close(); }
    });
    es.onmessage = (e) => {
      try {
        const r = JSON.parse(e.data as string) as Live;
        if (r.path.startsWith('/api/admin') || r.path.startsWith('/app')) return;
        setLines((old) => [r, ...old].slice(0, MAX_LIVE));
      } catch { /* not a record */ }
    };
    return () => es.close();
  }, []);
  return (
    <div class="card">
      <h2>Live <small aria-live="polite">({state})</small></h2>
      <div class="table-wrap live"><table>
        <thead><tr><th scope="col">Time</th><th scope="col">IP</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">ms</th></tr></thead>
        <tbody>{lines.map((l, i) => <tr key={`${l.time}${i}`}><td>{new Date(l.time).toLocaleTimeString()}</td><td>{l.ip}</td><td>{l.method} {l.path}</td><td>{l.status}</td><td>{l.ms}</td></tr>)}
          {lines.length === 0 && <tr><td colSpan={5}>Waiting for requests…</td></tr>}</tbody>
      </table></div>
    </div>
  );
}

export function LogsPage({ me }: { me: Me }) {
  const [rows, setRows] = useState<LogRow[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [live, setLive] = useState(false);
  const load = async (query: string, before: string | null) => {
    setError(null);
    try {
      const page = await api<{ items: LogRow[]; next: string | null }>('GET', `/logs?limit=50${query}${before ? `&before=${before}` : ''}`);
      setRows((old) => (before ? [...old, ...page.items] : page.items));
      setNext(page.items.length === 50 ? page.next : null);
    } catch (err) { setError(err); }
  };
  useEffect(() => { void load('', null); }, []);
  return (
    <section aria-labelledby="logs-title">
      <div class="row spread">
        <h1 id="logs-title">Request logs</h1>
        {me.user.isRoot && <button type="button" aria-pressed={live} onClick={() => setLive(!live)}>{live ? 'Stop live log' : 'Live log'}</button>}
      </div>
      {live && <LiveLog />}
      <form class="filters" onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.target as HTMLFormElement);
        const q = ['apiKey', 'status', 'path'].map((n) => [n, String(f.get(n) ?? '').trim()]).filter(([, v]) => v !== '')
          .map(([n, v]) => `&${n}=${encodeURIComponent(v!)}`).join('');
        setFilter(q);
        void load(q, null);
      }}>
        <label>API key<input name="apiKey" placeholder="key_…" /></label>
        <label>Status<input name="status" placeholder="4xx or 403" size={5} /></label>
        <label>Path starts with<input name="path" placeholder="/v1/verify" /></label>
        <button type="submit">Filter</button>
      </form>
      <ErrorLine error={error} />
      <div class="table-wrap"><table>
        <thead><tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">IP</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">ms</th><th scope="col">Country</th><th scope="col">Class</th></tr></thead>
        <tbody>{rows.map((r) => (
          <tr key={r.id}><td>{when(r.time)}</td><td><code>{r.apiKeyId}</code></td><td>{r.ip}</td><td>{r.method} {r.path}</td><td>{r.status}</td>
            <td>{r.durationMs}</td><td>{r.country ?? ''}</td><td>{r.classification ?? ''}</td></tr>
        ))}
          {rows.length === 0 && <tr><td colSpan={8}>No requests logged (kept for REQUEST_LOGS_TTL).</td></tr>}</tbody>
      </table></div>
      {next && <button type="button" onClick={() => void load(filter, next)}>Older requests</button>}
    </section>
  );
}
