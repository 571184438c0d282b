import { createHash } from 'node:crypto';
import { getDb, type Db } from '../../db/client';
import {
  claimSiteCrawl,
  deleteLineages,
  deleteSite,
  finishSiteCrawl,
  getSite,
  listSitePages,
  listSites,
  updateSiteProgress,
  upsertSite,
  type SiteRow,
} from '../../db/queries/knowledge';
import { requireAccount } from '../accounts/service';
import { AppError } from '../core/errors';
import { getLogger } from '../core/logger';
import { isUuid } from '../core/validation';
import { getEnv } from '../env';
import { getLimiter } from '../limits/limiter';
import { absolute, pageLinks, sitemapEntries } from './crawl';
import { checkOutboundUrl, CRAWLER_AGENT, fetchPage, type FetchedPage } from './fetch-page';
import { ALLOW_ALL, parseRobots, type Robots } from './robots';
import { KB_MAX_BYTES, prepareKnowledgeDocument, storeKnowledgeDocument } from './service';

/** One page's request may take this long (the whole crawl: KB_CRAWL_MAX_SECONDS). */
const PAGE_TIMEOUT_MS = 15_000;
/** Redirects followed for one address. */
const MAX_REDIRECTS = 5;
/** Sitemaps read in one crawl (the start address, or those a sitemap index names). */
const MAX_SITEMAPS = 20;
/** robots.txt comparisons spent on one page's links (a few ms) and on a whole crawl (well under a second). */
const ROBOTS_STEPS_PER_PAGE = 2_000_000;
const ROBOTS_STEPS_PER_CRAWL = 100_000_000;

const crawlLimiter = () => getLimiter('kb-crawl:account', { points: getEnv().KB_CRAWLS_PER_HOUR, durationSeconds: 3600 });

/** A website with what the page shows: its status and page count. */
export type Website = Pick<SiteRow, 'id' | 'url' | 'status' | 'pages' | 'error' | 'startedAt' | 'finishedAt'>;

export async function listWebsites(accountId: number): Promise<Website[]> {
  const stale = staleBefore();
  // A crawl whose process ended before it finished would read "importing" for ever.
  return (await listSites(await getDb(), accountId)).map((s) =>
    s.status === 'crawling' && s.startedAt && s.startedAt < stale ? { ...s, status: 'failed', error: 'The import was interrupted; re-sync to try again.' } : s,
  );
}

/** A crawl started before this has run past its time limit twice over: its process is gone. */
const staleBefore = () => new Date(Date.now() - 2 * getEnv().KB_CRAWL_MAX_SECONDS * 1000);

/**
 * "Add from a website" (docs/contracts.md §16): checks the address against the outbound rule and
 * the account's crawl rate, records the website and starts its crawl in the background (the
 * request never waits for it). An address already imported is re-synced.
 */
export async function startWebsiteImport(accountId: number, rawUrl: string): Promise<Website> {
  if (!rawUrl.trim()) throw new AppError('invalid_request', 'Enter the address of a page or a sitemap.');
  const { url } = await checkOutboundUrl(rawUrl);
  const db = await getDb();
  await requireAccount(db, accountId);
  url.hash = '';
  // Charged before the row exists: a refused start leaves no website that never runs.
  await crawlLimiter().enforce(String(accountId), 'website imports');
  return startCrawl(db, await upsertSite(db, accountId, url.toString()));
}

/** "Re-sync": crawls the website again; changed pages get a new version, unchanged ones stay, removed ones go. */
export async function resyncWebsite(accountId: number, siteId: string): Promise<Website> {
  const db = await getDb();
  const site = isUuid(siteId) ? await getSite(db, accountId, siteId) : null;
  if (!site) throw new AppError('not_found', `No website ${siteId}.`);
  await crawlLimiter().enforce(String(accountId), 'website imports');
  return startCrawl(db, site);
}

export async function removeWebsite(accountId: number, siteId: string) {
  if (!isUuid(siteId) || !(await deleteSite(await getDb(), accountId, siteId))) throw new AppError('not_found', `No website ${siteId}.`);
  return { site_id: siteId, deleted: true };
}

/** Claims the website's crawl (the charged start is given back when one runs) and runs it in the background. */
async function startCrawl(db: Db, site: SiteRow): Promise<Website> {
  const claimed = await claimSiteCrawl(db, site.accountId, site.id, staleBefore());
  if (!claimed) {
    await crawlLimiter().reward(String(site.accountId));
    throw new AppError('conflict', `${site.url} is being imported already.`);
  }
  void crawlWebsite(db, claimed).catch((e) => getLogger().error({ err: e, site_id: site.id }, 'website import failed'));
  return claimed;
}

/**
 * The crawl: the start address (a page, or a sitemap whose pages are queued), then the links of
 * every page on the same host, breadth first, robots.txt respected, at most KB_CRAWL_MAX_PAGES
 * pages and KB_CRAWL_MAX_SECONDS in all. A page whose text is unchanged keeps its document; a
 * changed one gets a new version; after a crawl that saw the whole site, pages no longer found go.
 */
export async function crawlWebsite(db: Db, site: SiteRow): Promise<void> {
  const env = getEnv();
  const signal = AbortSignal.timeout(env.KB_CRAWL_MAX_SECONDS * 1000);
  const start = new URL(site.url);
  const fetchOpts = { maxBytes: KB_MAX_BYTES, timeoutMs: PAGE_TIMEOUT_MS, signal };
  const existing = new Map((await listSitePages(db, site.accountId, site.id)).map((p) => [p.sourceUrl!, p]));
  const seen = new Set<string>();
  const stored = new Set<string>();
  let complete = true;
  let error: string | null = null;
  try {
    const robots = await readRobots(start, fetchOpts);
    const queue: string[] = [start.toString()];
    const queued = new Set(queue);
    // Never more than could be fetched; robots.txt checks are budgeted per page and per crawl (CPU on the main thread).
    const maxQueued = env.KB_CRAWL_MAX_PAGES * 4;
    const pageSteps = { n: 0 };
    let crawlSteps = 0;
    const enqueue = (u: string) => {
      const url = new URL(u);
      if (url.host !== start.host || queued.has(u)) return;
      if (queued.size >= maxQueued || pageSteps.n > ROBOTS_STEPS_PER_PAGE || crawlSteps + pageSteps.n > ROBOTS_STEPS_PER_CRAWL) {
        complete = false;
        return;
      }
      if (!robots.isAllowed(`${url.pathname}${url.search}`, pageSteps)) return;
      queued.add(u);
      queue.push(u);
    };
    let sitemaps = 0;
    // Addresses fetched are bounded too: pages without text or with errors count against twice the page limit.
    while (queue.length > 0 && seen.size < env.KB_CRAWL_MAX_PAGES * 2) {
      if (stored.size >= env.KB_CRAWL_MAX_PAGES || signal.aborted) {
        complete = false;
        break;
      }
      const address = queue.shift()!;
      seen.add(address);
      crawlSteps += pageSteps.n;
      pageSteps.n = 0;
      const res = await fetchFollowing(address, start, fetchOpts);
      if (!res) continue;
      if ('redirectedTo' in res) {
        enqueue(res.redirectedTo);
        continue;
      }
      const { page } = res;
      if (page.status !== 200 || page.truncated) continue;
      const body = page.body.toString('utf8');
      if (!/html/.test(page.contentType)) {
        const map = /xml/.test(page.contentType) || /^\s*<\?xml/.test(body) ? sitemapEntries(body, address) : null;
        if (map && ++sitemaps <= MAX_SITEMAPS) map.urls.forEach(enqueue);
        continue;
      }
      const { links } = pageLinks(body, address);
      links.forEach(enqueue);
      if (await storePage(db, site, address, page.body, existing.get(address))) stored.add(address);
      await updateSiteProgress(db, site.accountId, site.id, stored.size);
    }
    if (queue.length > 0) complete = false;
    if (stored.size === 0 && existing.size === 0) error = `No page with text was found at ${site.url}.`;
  } catch (e) {
    complete = false;
    error = e instanceof AppError ? e.message : `The import stopped: ${(e as Error).message}`;
  }
  if (complete) {
    await deleteLineages(
      db,
      site.accountId,
      [...existing.entries()].filter(([u]) => !stored.has(u)).map(([, p]) => p.lineageId),
    );
  }
  const pages = (await listSitePages(db, site.accountId, site.id)).length;
  await finishSiteCrawl(db, site.accountId, site.id, { pages, error });
}

type FetchOpts = Parameters<typeof fetchPage>[1];

/** robots.txt of the start address's origin; anything but a readable 200 allows everything. */
async function readRobots(start: URL, opts: FetchOpts): Promise<Robots> {
  const res = await fetchPage(new URL('/robots.txt', start).toString(), { ...opts, maxBytes: 512 * 1024 }).catch(() => null);
  return res && res.status === 200 && !res.truncated ? parseRobots(res.body.toString('utf8'), CRAWLER_AGENT) : ALLOW_ALL;
}

/**
 * The page at `address`, or where it redirects to when that is another address on the same host; null
 * when unreachable or refused. Only the start address's refusal fails the crawl (a linked page's is skipped).
 */
async function fetchFollowing(address: string, start: URL, opts: FetchOpts): Promise<{ page: FetchedPage } | { redirectedTo: string } | null> {
  const host = start.host;
  let current = address;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const page = await fetchPage(current, opts).catch((e) => {
      if (opts.signal?.aborted) throw new AppError('unavailable', `The import took longer than ${getEnv().KB_CRAWL_MAX_SECONDS} s and stopped.`);
      if (e instanceof AppError && hop === 0 && current === start.toString()) throw e;
      return null;
    });
    if (!page) return null;
    if (page.status < 300 || page.status >= 400 || !page.location) return { page };
    const next = absolute(page.location, current);
    if (!next || new URL(next).host !== host) return null;
    if (next !== address) return { redirectedTo: next };
    current = next;
  }
  return null;
}

/** Stores a page's text unless unchanged (a new version when changed); false when it has no text. */
async function storePage(db: Db, site: SiteRow, address: string, html: Buffer, before: { lineageId: string; contentHash: string | null } | undefined) {
  const prepared = await prepareKnowledgeDocument(address, html, 'text/html').catch((e) => {
    if (e instanceof AppError) return null;
    throw e;
  });
  if (!prepared) return false;
  const contentHash = createHash('sha256').update(prepared.text).digest('hex');
  if (before?.contentHash === contentHash) return true;
  await storeKnowledgeDocument(db, site.accountId, prepared, {
    filename: address,
    size: html.length,
    siteId: site.id,
    sourceUrl: address,
    contentHash,
    lineageId: before?.lineageId,
  });
  return true;
}
