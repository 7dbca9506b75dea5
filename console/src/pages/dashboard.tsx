// The dashboard: requests, verifications, failures and GOOD/NEUTRAL/BAD per hour or per day (from
// the request logs, so within REQUEST_LOGS_TTL), per account or key; the month's totals and top
// referrers (from the usage counters).
import { useEffect, useState } from 'preact/hooks';
import { type Account, api, type Key, type Me, type StatsRow } from '../api.js';
import { TimeChart } from '../chart.js';
import { ErrorLine } from '../ui.js';

interface Usage { month: string; total: { requests: number; good: number; neutral: number; bad: number }; referrers: { origin: string; requests: number }[] }

export function DashboardPage({ me }: { me: Me }) {
  const [accounts, setAccounts] = useState<Account[]>([]);
  const [keys, setKeys] = useState<Key[]>([]);
  const [accountId, setAccountId] = useState(me.user.accountId ?? '');
  const [keyId, setKeyId] = useState('');
  const [unit, setUnit] = useState<'hour' | 'day'>('hour');
  const [series, setSeries] = useState<StatsRow[]>([]);
  const [usage, setUsage] = useState<Usage | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    api<Account[]>('GET', '/accounts').then(setAccounts, setError);
  }, []);
  useEffect(() => {
    api<Key[]>('GET', `/keys${accountId ? `?accountId=${encodeURIComponent(accountId)}` : ''}`).then(setKeys, setError);
    setKeyId('');
  }, [accountId]);
  useEffect(() => {
    const filter = keyId ? `apiKey=${encodeURIComponent(keyId)}` : accountId ? `accountId=${encodeURIComponent(accountId)}` : '';
    Promise.all([
      api<{ series: StatsRow[] }>('GET', `/stats?unit=${unit}&span=${unit === 'hour' ? 24 : 30}&${filter}`),
      api<Usage>('GET', `/usage?${accountId ? `accountId=${encodeURIComponent(accountId)}` : ''}`),
    ]).then(([s, u]) => { setSeries(s.series); setUsage(u); setError(null); }, setError);
  }, [accountId, keyId, unit, tick]);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 15_000);
    return () => clearInterval(t);
  }, []);

  const times = series.map((r) => r.bucket);
  const sum = (pick: (r: StatsRow) => number) => series.reduce((t, r) => t + pick(r), 0);
  return (
    <section aria-labelledby="dash-title">
      <div class="row spread">
        <h1 id="dash-title">Dashboard</h1>
        <button type="button" onClick={() => setTick((n) => n + 1)}>Refresh</button>
      </div>
      <div class="filters">
        {me.user.isRoot && (
          <label>Account
            <select value={accountId} onChange={(e) => setAccountId((e.target as HTMLSelectElement).value)}>
              <option value="">All accounts</option>
              {accounts.map((a) => <option value={a.id} key={a.id}>{a.name}</option>)}
            </select>
          </label>
        )}
        <label>API key
          <select value={keyId} onChange={(e) => setKeyId((e.target as HTMLSelectElement).value)}>
            <option value="">All keys</option>
            {keys.map((k) => <option value={k.id} key={k.id}>{k.name || k.id}</option>)}
          </select>
        </label>
        <label>Per
          <select value={unit} onChange={(e) => setUnit((e.target as HTMLSelectElement).value as 'hour' | 'day')}>
            <option value="hour">hour (last 24 h)</option>
            <option value="day">day (last 30 days)</option>
          </select>
        </label>
      </div>
      <ErrorLine error={error} />
      <dl class="stats">
        <div><dt>Requests</dt><dd data-stat="requests">{sum((r) => r.requests)}</dd></div>
        <div><dt>Verifications</dt><dd data-stat="verifications">{sum((r) => r.verifications)}</dd></div>
        <div><dt>Failures</dt><dd data-stat="failures">{sum((r) => r.failures)}</dd></div>
        <div><dt>GOOD / NEUTRAL / BAD</dt><dd data-stat="classes">{sum((r) => r.good)} / {sum((r) => r.neutral)} / {sum((r) => r.bad)}</dd></div>
      </dl>
      <div class="charts">
        <TimeChart title="Traffic" times={times} series={[
          { label: 'Requests', values: series.map((r) => r.requests), color: '#3b82f6' },
          { label: 'Verifications', values: series.map((r) => r.verifications), color: '#16a34a' },
          { label: 'Failures', values: series.map((r) => r.failures), color: '#dc2626' },
        ]} />
        <TimeChart title="Classification" bars times={times} series={[
          { label: 'GOOD', values: series.map((r) => r.good), color: '#16a34a' },
          { label: 'NEUTRAL', values: series.map((r) => r.neutral), color: '#ca8a04' },
          { label: 'BAD', values: series.map((r) => r.bad), color: '#dc2626' },
        ]} />
      </div>
      {usage && (
        <div class="grid2">
          <div class="card">
            <h2>This month ({usage.month})</h2>
            <p>{usage.total.requests} requests counted · GOOD {usage.total.good} · NEUTRAL {usage.total.neutral} · BAD {usage.total.bad}</p>
          </div>
          <div class="card">
            <h2>Top referrers</h2>
            {usage.referrers.length === 0 ? <p>None yet.</p> : (
              <table><thead><tr><th scope="col">Origin</th><th scope="col">Requests</th></tr></thead>
                <tbody>{usage.referrers.map((r) => <tr key={r.origin}><td>{r.origin}</td><td>{r.requests}</td></tr>)}</tbody></table>
            )}
          </div>
        </div>
      )}
    </section>
  );
}
