// Plans: monthly request limits per account; root sets them.
import { useEffect, useState } from 'preact/hooks';
import { api, type Me, type Plan } from '../api.js';
import { ErrorLine } from '../ui.js';

export function PlansPage({ me }: { me: Me }) {
  const [plans, setPlans] = useState<Plan[]>([]);
  const [error, setError] = useState<unknown>(null);
  const load = () => api<Plan[]>('GET', '/plans').then(setPlans, setError);
  useEffect(() => { void load(); }, []);
  return (
    <section aria-labelledby="plans-title">
      <h1 id="plans-title">Plans</h1>
      {me.user.isRoot && (
        <form class="card filters" onSubmit={async (e) => {
          e.preventDefault();
          const form = e.target as HTMLFormElement;
          const f = new FormData(form);
          const limit = String(f.get('limit')).trim();
          setError(null);
          try {
            await api('PUT', `/plans/${encodeURIComponent(String(f.get('name')))}`, { requestLimit: limit === '' ? null : Number(limit) });
            form.reset();
            await load();
          } catch (err) { setError(err); }
        }}>
          <label>Plan name<input name="name" required pattern="[a-z0-9][a-z0-9_.\-]{0,63}" /></label>
          <label>Requests per month (empty = unlimited)<input name="limit" inputMode="numeric" pattern="[0-9]*" /></label>
          <button class="primary" type="submit">Save plan</button>
        </form>
      )}
      <ErrorLine error={error} />
      <div class="table-wrap"><table>
        <thead><tr><th scope="col">Plan</th><th scope="col">Requests per month</th></tr></thead>
        <tbody>{plans.map((p) => <tr key={p.name}><td>{p.name}</td><td>{p.requestLimit ?? 'unlimited'}</td></tr>)}</tbody>
      </table></div>
    </section>
  );
}
