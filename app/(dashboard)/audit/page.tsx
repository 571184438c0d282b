import { AUDIT_ACTIONS } from '@/lib/audit/contract';
import { auditActors, auditPage, parseAuditFilters } from '@/lib/audit/service';
import { requirePageMember } from '@/lib/auth/session';
import { AuditTable } from './AuditTable';

export const metadata = { title: 'Audit log · svc' };

/** The account's audit log (docs/contracts.md §18): owner and admins; newest first, 50 a page, filtered by member and action. */
export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { accountId } = await requirePageMember('audit.read');
  const filters = parseAuditFilters(await searchParams);
  const [page, actors] = await Promise.all([auditPage(accountId, filters), auditActors(accountId)]);
  const link = (before?: number) => {
    const p = new URLSearchParams();
    if (filters.member) p.set('member', filters.member);
    if (filters.action) p.set('action', filters.action);
    if (before !== undefined) p.set('before', String(before));
    const s = p.toString();
    return `/audit${s ? `?${s}` : ''}`;
  };
  return (
    <>
      <h1>Audit log</h1>
      <p className="muted">
        Who signed in and who changed the team, keys, webhooks, widget clients and settings of this account, newest first. Entries cannot be edited or deleted;
        they are kept for a limited time set by the operator.
      </p>
      <div className="panel table-panel" data-empty={page.entries.length === 0 ? '' : undefined}>
        <form className="toolbar" method="get" action="/audit" role="search">
          <FilterSelect name="member" label="Member" all="All members" value={filters.member} options={actors} />
          <FilterSelect name="action" label="Action" all="All actions" value={filters.action} options={AUDIT_ACTIONS} />
          <div className="field">
            <button type="submit" className="btn secondary">
              Filter
            </button>
          </div>
        </form>
        <AuditTable entries={page.entries} filtered={!!(filters.member || filters.action)} />
        <nav className="pager" aria-label="Audit log pages">
          {filters.before !== undefined && <a href={link()}>Newest entries</a>}
          {page.next !== null && <a href={link(page.next)}>Older entries</a>}
        </nav>
      </div>
    </>
  );
}

/** One filter of the toolbar: "All …" (empty) or one of the options. */
function FilterSelect(p: { name: string; label: string; all: string; value: string | undefined; options: readonly string[] }) {
  return (
    <div className="field">
      <label htmlFor={`audit-${p.name}`}>{p.label}</label>
      <select id={`audit-${p.name}`} name={p.name} defaultValue={p.value}>
        <option value="">{p.all}</option>
        {p.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </div>
  );
}
