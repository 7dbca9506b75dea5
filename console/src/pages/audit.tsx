// The audit log: every write through the console, the admin API or the CLI, newest first, paged.
import { useEffect, useState } from 'preact/hooks';
import { api, type Me } from '../api.js';
import { ErrorLine, when } from '../ui.js';

interface Entry { id: string; time: string; actor: string; ip: string | null; action: string; target: string | null; accountId: string | null; detail: Record<string, unknown> }

export function AuditPage(_: { me: Me }) {
  const [items, setItems] = useState<Entry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = async (before: string | null) => {
    try {
      const page = await api<{ items: Entry[]; next: string | null }>('GET', `/audit?limit=50${before ? `&before=${before}` : ''}`);
      setItems((old) => (before ? [...old, ...page.items] : page.items));
      setNext(page.items.length === 50 ? page.next : null);
    } catch (err) { setError(err); }
  };
  useEffect(() => { void load(null); }, []);
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <ErrorLine error={error} />
      <div class="table-wrap"><table>
        <thead><tr><th scope="col">Time</th><th scope="col">Who</th><th scope="col">From</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">Detail</th></tr></thead>
        <tbody>{items.map((e) => (
          <tr key={e.id}><td>{when(e.time)}</td><td>{e.actor}</td><td>{e.ip ?? '—'}</td><td>{e.action}</td><td><code>{e.target ?? ''}</code></td>
            <td><code class="wrap">{Object.keys(e.detail).length ? JSON.stringify(e.detail) : ''}</code></td></tr>
        ))}</tbody>
      </table></div>
      {next && <button type="button" onClick={() => void load(next)}>Older entries</button>}
    </section>
  );
}
