// Settings: the user's password and two-factor login; for root, the effective configuration with
// secrets redacted.
import { useEffect, useState } from 'preact/hooks';
import { api, type Me } from '../api.js';
import { ErrorLine } from '../ui.js';
import { PasswordPage } from './login.js';

function TwoFactor({ me, onChange }: { me: Me; onChange: (me: Me) => void }) {
  const [setup, setSetup] = useState<{ secret: string; uri: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const refresh = async () => onChange(await api<Me>('GET', '/me'));
  if (me.user.totpEnabled) {
    return (
      <form class="card" onSubmit={async (e) => {
        e.preventDefault();
        try { await api('POST', '/me/totp', { enabled: false, password: String(new FormData(e.target as HTMLFormElement).get('password')) }); await refresh(); } catch (err) { setError(err); }
      }}>
        <h2>Two-factor login is on</h2>
        <label>Password<input name="password" type="password" required autoComplete="current-password" /></label>
        <ErrorLine error={error} />
        <button type="submit" class="danger">Turn two-factor login off</button>
      </form>
    );
  }
  return (
    <div class="card">
      <h2>Two-factor login</h2>
      {setup === null
        ? <button type="button" onClick={async () => { try { setSetup(await api('POST', '/me/totp/setup')); } catch (err) { setError(err); } }}>Set up an authenticator app</button>
        : (
          <form onSubmit={async (e) => {
            e.preventDefault();
            try { await api('POST', '/me/totp', { enabled: true, code: String(new FormData(e.target as HTMLFormElement).get('code')) }); setSetup(null); await refresh(); } catch (err) { setError(err); }
          }}>
            <p>Add this secret to your authenticator app, then enter the code it shows.</p>
            <label>Secret<input readOnly value={setup.secret} /></label>
            <label>otpauth URI<input readOnly value={setup.uri} /></label>
            <label>Code<input name="code" inputMode="numeric" pattern="[0-9]{6}" required autoComplete="one-time-code" /></label>
            <button type="submit" class="primary">Turn on</button>
          </form>
        )}
      <ErrorLine error={error} />
    </div>
  );
}

interface Source { name: string; kind: string; url: string; entries: number; lastUpdate: string | null; nextRun: string | null; lastError: { message?: string } | null }

function ThreatSources() {
  const [report, setReport] = useState<{ enabled: boolean; sources: Source[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => { api('GET', '/threats').then(setReport, setError); }, []);
  return (
    <div class="card">
      <h2>Threat sources</h2>
      <ErrorLine error={error} />
      {report && !report.enabled && <p>Threat lists are off (THREATS_ENABLED=0).</p>}
      {report && report.enabled && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">Source</th><th scope="col">Kind</th><th scope="col">Entries</th><th scope="col">Last update</th><th scope="col">Next run</th><th scope="col">Last error</th></tr></thead>
          <tbody>{report.sources.map((s) => (
            <tr key={s.name}><td title={s.url}>{s.name}</td><td>{s.kind}</td><td>{s.entries}</td><td>{s.lastUpdate ? new Date(s.lastUpdate).toLocaleString() : 'never'}</td>
              <td>{s.nextRun ? new Date(s.nextRun).toLocaleString() : '—'}</td><td>{s.lastError ? String(s.lastError.message ?? JSON.stringify(s.lastError)) : ''}</td></tr>
          ))}
            {report.sources.length === 0 && <tr><td colSpan={6}>No source configured.</td></tr>}</tbody>
        </table></div>
      )}
    </div>
  );
}

export function SettingsPage({ me, onChange }: { me: Me; onChange: (me: Me) => void }) {
  const [config, setConfig] = useState<{ version: string; variables: Record<string, unknown> } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [filter, setFilter] = useState('');
  useEffect(() => { if (me.user.isRoot) api('GET', '/settings').then(setConfig, setError); }, []);
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <div class="grid2">
        <PasswordPage me={me} onDone={onChange} />
        <TwoFactor me={me} onChange={onChange} />
      </div>
      {me.user.isRoot && <ThreatSources />}
      {me.user.isRoot && (
        <div class="card">
          <h2>Effective configuration {config && <small>(version {config.version})</small>}</h2>
          <p>Secrets show as &lt;set&gt;. Change variables in the environment and restart (docs/configuration.md).</p>
          <label>Filter<input value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value.toUpperCase())} /></label>
          <ErrorLine error={error} />
          {config && (
            <div class="table-wrap"><table>
              <thead><tr><th scope="col">Variable</th><th scope="col">Value</th></tr></thead>
              <tbody>{Object.entries(config.variables).filter(([n]) => n.includes(filter)).map(([n, v]) => (
                <tr key={n}><td><code>{n}</code></td><td><code class="wrap">{typeof v === 'string' ? v : JSON.stringify(v)}</code></td></tr>
              ))}</tbody>
            </table></div>
          )}
        </div>
      )}
    </section>
  );
}
