/** lib/conversations/messages.ts: the one builder of a conversation's messages and the API's shape of them. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { ConversationMessage, messagesOf, roleOf, toApiMessage } from '../../lib/conversations/messages';
import { Message } from '../../lib/conversations/contract';

const ids = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const turn = (n: number, extra: object = {}) => ({
  id: ids(n),
  question: `q${n}`,
  answer: `a${n}`,
  question_message_id: ids(100 + n),
  answer_message_id: ids(200 + n),
  created_at: `2026-01-0${n} 10:00:00`,
  ...extra,
});

it('each response gives its question (visitor) then its answer (ai), in the order given, with their own attachments', () => {
  const attachments = [
    { id: ids(301), message_id: ids(101), filename: 'a.pdf', content_type: 'application/pdf', size: 3 },
    { id: ids(302), message_id: null, filename: 'loose.txt', content_type: 'text/plain', size: 1 },
    { id: ids(303), message_id: ids(101), filename: 'b.png', content_type: 'image/png', size: 2 },
  ];
  const messages = messagesOf(
    [turn(1, { likes: 2, dislikes: 1, comments: 4, my_feedback: -1 }), turn(2, { error: 'failed', sources: [{ document_id: 'd', title: 'T', passage: 'p' }] })],
    attachments,
  );
  assert.deepEqual(
    messages.map((m) => [m.author, m.content, m.response_id]),
    [
      ['visitor', 'q1', ids(1)],
      ['ai', 'a1', ids(1)],
      ['visitor', 'q2', ids(2)],
      ['ai', 'a2', ids(2)],
    ],
  );
  assert.deepEqual(
    messages[0]!.attachments.map((a) => a.filename),
    ['a.pdf', 'b.png'],
  );
  assert.deepEqual(
    messages.slice(1).flatMap((m) => m.attachments),
    [],
    'a loose attachment belongs to no message',
  );
  assert.deepEqual([messages[1]!.likes, messages[1]!.dislikes, messages[1]!.comments, messages[1]!.mine], [2, 1, 4, 'dislike']);
  assert.deepEqual([messages[3]!.error, messages[3]!.sources.length, messages[2]!.error, messages[2]!.sources.length], ['failed', 1, null, 0]);
  for (const m of messages) assert.equal(ConversationMessage.safeParse(m).success, true, 'the zod shape holds');
});

it('the API keeps its public shape: role user|assistant, the same keys in the same order, attachment urls', () => {
  const [q, a] = messagesOf([turn(1)], [{ id: ids(301), message_id: ids(101), filename: 'a.pdf', content_type: 'application/pdf', size: 3 }]);
  const api = [toApiMessage(q!), toApiMessage(a!)];
  assert.deepEqual(
    api.map((m) => Object.keys(m)),
    Array(2).fill(['message_id', 'role', 'author', 'author_name', 'content', 'created_at', 'response_id', 'attachments']),
  );
  assert.deepEqual(
    api.map((m) => m.role),
    ['user', 'assistant'],
  );
  assert.deepEqual(api[0]!.attachments, [
    { upload_id: ids(301), filename: 'a.pdf', content_type: 'application/pdf', size: 3, url: `/customer-api/v2/attachments/${ids(301)}` },
  ]);
  for (const m of api) assert.equal(Message.safeParse(m).success, true);
  assert.deepEqual((['visitor', 'ai', 'agent', 'system', 'note'] as const).map(roleOf), ['user', 'assistant', 'assistant', 'assistant', 'assistant']);
});

it('stored messages merge with the responses by time, a response first on a tie, then by seq; they keep their author and name', () => {
  const at = (n: number, ms = 0) => `2026-01-0${n} 10:00:00.${String(ms).padStart(6, '0')}`;
  const turns = [turn(1, { sort_at: at(1) }), turn(3, { sort_at: at(3) })];
  const stored = [
    { id: ids(402), author: 'agent' as const, author_name: 'Ann', text: 'hello', created_at: '2026-01-02 10:00:00', sort_at: at(2, 5), seq: 2 },
    { id: ids(401), author: 'system' as const, author_name: null, text: 'Ann joined', created_at: '2026-01-02 10:00:00', sort_at: at(2, 5), seq: 1 },
    { id: ids(403), author: 'note' as const, author_name: 'Ann', text: 'vip', created_at: '2026-01-03 10:00:00', sort_at: at(3), seq: 3 },
    { id: ids(404), author: 'visitor' as const, author_name: null, text: 'thanks', created_at: '2026-01-04 10:00:00', sort_at: at(4), seq: 4 },
  ];
  const messages = messagesOf(turns, [], stored);
  assert.deepEqual(
    messages.map((m) => [m.author, m.content, m.author_name, m.response_id]),
    [
      ['visitor', 'q1', null, ids(1)],
      ['ai', 'a1', null, ids(1)],
      ['system', 'Ann joined', null, null],
      ['agent', 'hello', 'Ann', null],
      ['visitor', 'q3', null, ids(3)],
      ['ai', 'a3', null, ids(3)],
      ['note', 'vip', 'Ann', null],
      ['visitor', 'thanks', null, null],
    ],
  );
  for (const m of messages) assert.equal(ConversationMessage.safeParse(m).success, true);
  for (const m of messages.map(toApiMessage)) assert.equal(Message.safeParse(m).success, true);
});
