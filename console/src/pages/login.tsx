// Login (with the one-time code when the user turned TOTP on) and the password change, forced at
// a first login and offered in the settings.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Me } from '../api.js';
import { ErrorLine } from '../ui.js';

/**
 * Focuses the form's first field when the page appears (autofocus works once per document only),
 * in the same task that shows the form, so that keys typed as soon as it is visible land in it.
 */
function useFirstField(active = true) {
  const ref = useRef<HTMLFormElement>(null);
  useLayoutEffect(() => {
    if (active) ref.current?.querySelector<HTMLInputElement>('input:not([hidden]):not([readonly])')?.focus();
  }, []);
  return ref;
}

export function LoginPage({ onLogin }: { onLogin: (me: Me) => void }) {
  const form = useFirstField();
  const [error, setError] = useState<unknown>(null);
  const [needTotp, setNeedTotp] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.target as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      onLogin(await api<Me>('POST', '/login', {
        username: String(data.get('username')), password: String(data.get('password')),
        ...(needTotp ? { totp: String(data.get('totp') ?? '') } : {}),
      }));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'TOTP_REQUIRED') setNeedTotp(true);
      else setError(err instanceof ApiError && err.code === 'RATE_LIMITED' ? new Error('Too many attempts: wait and try again.') : err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="center">
      <form class="card narrow" onSubmit={submit} aria-labelledby="login-title" ref={form}>
        <h1 id="login-title">Palisade console</h1>
        <label>Username<input name="username" autoComplete="username" required /></label>
        <label>Password<input name="password" type="password" autoComplete="current-password" required /></label>
        {needTotp && <label>One-time code<input name="totp" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required autoFocus /></label>}
        <ErrorLine error={error} />
        <button class="primary" type="submit" disabled={busy}>Log in</button>
      </form>
    </main>
  );
}

export function PasswordPage({ me, forced, onDone }: { me: Me; forced?: boolean; onDone: (me: Me) => void }) {
  const ref = useFirstField(forced === true);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const next = String(form.get('newPassword'));
    if (next !== String(form.get('repeat'))) return setError(new Error('The two new passwords differ.'));
    setError(null);
    try {
      const updated = await api<Me>('POST', '/me/password', { currentPassword: String(form.get('currentPassword')), newPassword: next });
      (e.target as HTMLFormElement).reset();
      setDone(true);
      onDone(updated);
    } catch (err) {
      setError(err);
    }
  };
  const body = (
    <form class={forced ? 'card narrow' : 'card'} onSubmit={submit} aria-labelledby="password-title" ref={ref}>
      <h1 id="password-title">{forced ? 'Choose a new password' : 'Change password'}</h1>
      <input type="text" name="username" autoComplete="username" value={me.user.username} hidden readOnly />
      {forced && <p>This is the first login of <strong>{me.user.username}</strong>: its password must be changed before anything else.</p>}
      <label>Current password<input name="currentPassword" type="password" autoComplete="current-password" required /></label>
      <label>New password<input name="newPassword" type="password" autoComplete="new-password" required /></label>
      <label>New password again<input name="repeat" type="password" autoComplete="new-password" required /></label>
      <ErrorLine error={error} />
      {done && !forced && <p role="status">Password changed; other sessions were logged out.</p>}
      <button class="primary" type="submit">Change password</button>
    </form>
  );
  return forced ? <main class="center">{body}</main> : body;
}
