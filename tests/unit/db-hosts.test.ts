/** Which host a multi-host DATABASE_URL writes to (db/hosts.ts): parsing, the choice, the watch, a real probe. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { choosePrimary, HostWatch, type HostState, parseHosts, sqlProbe } from '../../db/hosts';
import { fromDatabaseError } from '../../lib/core/errors';
import { freePort } from '../helpers/instances';

describe('database hosts', () => {
  it('parses the hosts of a libpq-style URL', () => {
    assert.deepEqual(parseHosts('postgres://u:p@a:5440,b:5441/db?target_session_attrs=read-write'), [
      { host: 'a', port: 5440 },
      { host: 'b', port: 5441 },
    ]);
    assert.deepEqual(parseHosts('postgres://u@[::1]:6000,c/db'), [
      { host: '::1', port: 6000 },
      { host: 'c', port: 5432 },
    ]);
    assert.equal(parseHosts('postgres://u:p%40x@only:5432/db').length, 1);
  });

  it('stays on a writable primary, moves to the first writable host otherwise, and reports two', () => {
    assert.deepEqual(choosePrimary(['read-only', 'writable'], null), { primary: 1, conflict: false });
    assert.deepEqual(choosePrimary(['writable', 'writable'], 1), { primary: 1, conflict: true });
    assert.deepEqual(choosePrimary(['down', 'writable'], 0), { primary: 1, conflict: false });
    assert.deepEqual(choosePrimary(['read-only', 'down'], 0), { primary: null, conflict: false });
  });

  it('waits for a writable host and tells the pool when the primary moves', async () => {
    const states: HostState[] = ['read-only', 'down'];
    const watch = new HostWatch(
      [
        { host: 'a', port: 1 },
        { host: 'b', port: 2 },
      ],
      async (i) => states[i]!,
    );
    const moves: Array<number | null> = [];
    watch.onMove((p) => moves.push(p));
    await assert.rejects(watch.writable(50), { code: 'ECONNREFUSED' });
    const waiting = watch.writable(5000);
    states[1] = 'writable';
    await watch.probeNow();
    assert.equal(await waiting, 1);
    // The old primary is gone, the standby promoted; then the old one returns read-only.
    states[1] = 'down';
    await watch.probeNow();
    states[0] = 'writable';
    await watch.probeNow();
    states[1] = 'read-only';
    await watch.probeNow();
    assert.deepEqual(moves, [1, null, 0]);
    assert.equal(await watch.writable(10), 0);
    watch.stop();
  });

  it('refuses a write that met a read-only host (25006) as unavailable: it did not happen and may be retried', () => {
    assert.equal(fromDatabaseError(Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), { code: '25006' }))?.code, 'unavailable');
  });

  it('probes a real server: the test PostgreSQL is writable, a closed port is down', async () => {
    const closed = await freePort();
    const url = `postgres://postgres@127.0.0.1:5432,127.0.0.1:${closed}/postgres`;
    const hosts = parseHosts(url);
    const { probe, end } = sqlProbe(url, hosts);
    try {
      assert.equal(await probe(0), 'writable');
      assert.equal(await probe(1), 'down');
    } finally {
      await end();
    }
  });
});
