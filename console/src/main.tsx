// The console: login (and the forced password change of a first login), then the pages by hash
// route. Every page reads and writes through the admin API (api.ts); write buttons show only for
// the roles that may use them.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Me, setCsrf, whenSessionLost } from './api.js';
import { AccountsPage } from './pages/accounts.js';
import { AuditPage } from './pages/audit.js';
import { DashboardPage } from './pages/dashboard.js';
import { KeysPage } from './pages/keys.js';
import { LoginPage, PasswordPage } from './pages/login.js';
import { LogsPage } from './pages/logs.js';
import { PlansPage } from './pages/plans.js';
import { SettingsPage } from './pages/settings.js';
import { UsersPage } from './pages/users.js';
import './styles.css';

const PAGES = [
  ['dashboard', 'Dashboard'], ['keys', 'API keys'], ['logs', 'Logs'], ['accounts', 'Accounts'], ['users', 'Users'],
  ['plans', 'Plans'], ['audit', 'Audit'], ['settings', 'Settings'],
] as const;
type Page = (typeof PAGES)[number][0];

const pageOf = (): Page => {
  const h = location.hash.replace(/^#\/?/, '').split('?')[0] as Page;
  return PAGES.some(([p]) => p === h) ? h : 'dashboard';
};

function applyTheme(theme: string | null) {
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}
applyTheme(localStorage.getItem('palisade-theme'));

function ThemeToggle() {
  const [theme, setTheme] = useState(localStorage.getItem('palisade-theme') ?? 'auto');
  const next = theme === 'auto' ? 'dark' : theme === 'dark' ? 'light' : 'auto';
  return (
    <button type="button" class="ghost" aria-label={`Theme: ${theme}. Switch to ${next}`} onClick={() => {
      if (next === 'auto') localStorage.removeItem('palisade-theme'); else localStorage.setItem('palisade-theme', next);
      applyTheme(next === 'auto' ? null : next);
      setTheme(next);
    }}>{theme === 'dark' ? '☾' : theme === 'light' ? '☀' : '◐'} Theme</button>
  );
}

function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [page, setPage] = useState<Page>(pageOf());
  useEffect(() => {
    const onHash = () => setPage(pageOf());
    addEventListener('hashchange', onHash);
    whenSessionLost(() => setMe(null));
    api<Me | { user: null }>('GET', '/session').then((s) => setMe(s.user === null ? null : s as Me), () => setMe(null));
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    document.title = me ? `${PAGES.find(([p]) => p === page)![1]} · Palisade` : 'Palisade console';
  }, [me, page]);

  if (me === undefined) return <main class="center"><p>Loading…</p></main>;
  if (me === null) return <LoginPage onLogin={setMe} />;
  if (me.user.mustChangePassword) return <PasswordPage me={me} forced onDone={setMe} />;
  const logout = async () => {
    try { await api('POST', '/logout'); } catch { /* the session is gone either way */ }
    setCsrf(null);
    setMe(null);
  };
  const user = me.user;
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <strong class="brand">Palisade</strong>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map(([p, label]) => (
              <li key={p}><a href={`#/${p}`} aria-current={p === page ? 'page' : undefined}>{label}</a></li>
            ))}
          </ul>
        </nav>
        <div class="row">
          <span class="who" title={user.accountId ?? 'all accounts'}>{user.username} · {user.role}{me.account ? ` · ${me.account.name}` : ''}</span>
          <ThemeToggle />
          <button type="button" class="ghost" onClick={logout}>Log out</button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page === 'dashboard' && <DashboardPage me={me} />}
        {page === 'keys' && <KeysPage me={me} />}
        {page === 'logs' && <LogsPage me={me} />}
        {page === 'accounts' && <AccountsPage me={me} />}
        {page === 'users' && <UsersPage me={me} />}
        {page === 'plans' && <PlansPage me={me} />}
        {page === 'audit' && <AuditPage me={me} />}
        {page === 'settings' && <SettingsPage me={me} onChange={setMe} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
