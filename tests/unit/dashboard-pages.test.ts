/** proxy.ts's matcher must be a literal for Next: it is held equal to the one list of dashboard pages here. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DASHBOARD_PAGES } from '../../lib/auth/pages';
import { config } from '../../proxy';

describe('dashboard pages are listed once', () => {
  it("the proxy's matcher gates every dashboard page (and attachments), nothing else", () => {
    const expected = [...DASHBOARD_PAGES.map((p) => (p.path === '/' ? '/' : `${p.path}/:path*`)), '/attachments/:path*'];
    assert.deepEqual([...config.matcher].sort(), expected.sort());
  });
});
