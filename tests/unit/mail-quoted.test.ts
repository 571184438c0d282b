import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quoted } from '../../lib/mail/templates';

test('quoted removes links and keeps one short line', () => {
  assert.equal(quoted('see https://evil.example/x and\nwww.spam.example now', 200), 'see [link removed] and [link removed] now');
  assert.equal(quoted('a'.repeat(50), 10), `${'a'.repeat(9)}…`);
});

test('quoted stays linear on a long dotted text and still marks the cut', () => {
  const hostile = 'a.'.repeat(500_000);
  const started = process.hrtime.bigint();
  const line = quoted(hostile, 1000);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  assert.ok(line.endsWith('…'));
  assert.ok(line.length <= 1000);
  // Quadratic work on 1 MB takes minutes; the bounded prefix takes well under a second.
  assert.ok(ms < 2000, `took ${ms} ms`);
});

test('quoted marks a cut even when link removal shortened the kept prefix', () => {
  const line = quoted(`${'http://x.example/'.repeat(200)}tail`, 20);
  assert.ok(line.endsWith('…'));
});
