import { SYSTEM } from '../audit/contract';
import { randomUUID } from 'node:crypto';
import type { WidgetClaims } from '../auth/widget-tokens';
import type { Role } from '../auth/roles';
import { ask } from '../visitor/service';
import { addNote, rateConversation, replyAsMember, requestHandoff, resolveConversation, storeVisitorMessage, takeOver } from '../conversations/handoff';
import { conversationSummary } from '../conversations/inbox-views';
import { createCannedReply } from '../conversations/canned-replies';
import { saveHandoffSettings } from '../conversations/availability';
import type { Member } from '../conversations/handoff-contract';
import { DEFAULT_HANDOFF_SETTINGS } from '../conversations/handoff-contract';
import { AppError } from '../core/errors';
import { getDb } from '../../db/client';
import { databaseClock, retimeDemoConversation, type DemoMark } from '../../db/queries/demo';

/**
 * The demo's human handoff (docs/contracts.md §14), through the same services as the widget and
 * the inbox: a conversation Waiting in the inbox, one the agent handles (replies, a visitor
 * message, an internal note), a resolved one with a rating and comment, one the AI answered
 * alone and the visitor rated; the AI declined the
 * questions it had nothing for. Each step is then moved to a believable moment (a resolved chat
 * the day before, one handled three hours before, a visitor waiting for minutes), so /insights shows
 * real first-response and resolution times. Returns the three conversations' ids.
 */
export async function seedHandoffDemo(d: {
  accountId: number;
  ownerId: number;
  agentId: number;
  widget: { clientId: string; channelId: number };
}): Promise<{ waiting: string; handled: string; resolved: string }> {
  const owner: Member = { accountId: d.accountId, userId: d.ownerId, role: 'owner' as Role };
  const agent: Member = { accountId: d.accountId, userId: d.agentId, role: 'agent' as Role };
  await saveHandoffSettings(SYSTEM, owner, {
    ...DEFAULT_HANDOFF_SETTINGS,
    time_zone: 'Europe/Berlin',
    away_text: "We're away right now. Leave your email address and we'll answer there.",
  });
  await createCannedReply(owner, { shortcut: 'thanks', text: 'Thank you for your patience! Is there anything else I can help with?' });
  await createCannedReply(owner, { shortcut: 'tracking', text: 'You find the tracking link on the Orders page as soon as your parcel has shipped.' });

  const visitorOf = () => new Visitor(d.accountId, d.widget);

  const db = await getDb();
  const start = (await databaseClock(db)).getTime();
  /** Each step's moment, in minutes before the seeding started. */
  const timeline = () => {
    const marks: DemoMark[] = [];
    return {
      marks,
      at: async (minutesAgo: number) => {
        const now = await databaseClock(db);
        marks.push({ at: now, shiftMs: start - minutesAgo * 60_000 - now.getTime() });
      },
    };
  };

  const resolved = visitorOf();
  const rt = timeline();
  await rt.at(27 * 60);
  await resolved.ask('Is the blue kettle back in stock?');
  await rt.at(27 * 60 - 2);
  await requestHandoff(resolved.conversation());
  const r = { conversation_id: resolved.id() };
  await rt.at(27 * 60 - 6);
  await replyAsMember(owner, { ...r, text: 'The blue kettle is back next Tuesday. Shall I reserve one for you?' });
  await rt.at(27 * 60 - 11);
  await storeVisitorMessage(resolved.conversation(), { client_message_id: randomUUID(), text: 'Yes please, thank you!' });
  await rt.at(27 * 60 - 14);
  await replyAsMember(owner, { ...r, text: 'Reserved under your order number. Have a nice day!' });
  await rt.at(27 * 60 - 26);
  await resolveConversation(owner, r);
  await rt.at(27 * 60 - 27);
  await rateConversation(resolved.conversation(), { rating: 5, comment: 'Quick and friendly, thanks!' });
  await retimeDemoConversation(db, d.accountId, resolved.id(), rt.marks);

  // The AI answered, the team closed the conversation, the visitor rated it: CSAT for the AI alone.
  const aiOnly = visitorOf();
  const at = timeline();
  await at.at(2 * 24 * 60);
  await aiOnly.ask('Can I export my data?');
  await at.at(2 * 24 * 60 - 12);
  await resolveConversation(owner, { conversation_id: aiOnly.id() });
  await at.at(2 * 24 * 60 - 13);
  await rateConversation(aiOnly.conversation(), { rating: 4, comment: 'Found the export, thanks.' });
  await retimeDemoConversation(db, d.accountId, aiOnly.id(), at.marks);

  const handled = visitorOf();
  const ht = timeline();
  await ht.at(3 * 60);
  await handled.ask('Can I change the delivery address of order 4711?');
  await ht.at(3 * 60 - 1);
  await requestHandoff(handled.conversation());
  const h = { conversation_id: handled.id() };
  await ht.at(3 * 60 - 4);
  await takeOver(agent, h);
  await replyAsMember(agent, { ...h, text: 'Hi! I can change it while the order has not shipped yet. What is the new address?' });
  await ht.at(3 * 60 - 9);
  await storeVisitorMessage(handled.conversation(), { client_message_id: randomUUID(), text: 'Lindenstraße 5, 20095 Hamburg, please.' });
  await ht.at(3 * 60 - 12);
  await replyAsMember(agent, { ...h, text: 'Done: order 4711 now goes to Lindenstraße 5. You get a new confirmation email shortly.' });
  await ht.at(3 * 60 - 14);
  await addNote(agent, { ...h, text: 'Address changed in the shop system; the customer asked twice before, check the address form.' });
  await retimeDemoConversation(db, d.accountId, handled.id(), ht.marks);

  const waiting = visitorOf();
  const wt = timeline();
  await wt.at(9);
  await waiting.ask('Can I bring my dog to your shop in Hamburg?');
  await wt.at(8);
  await waiting.ask('My parcel arrived with a broken lid, can someone help me?');
  await wt.at(6);
  await requestHandoff(waiting.conversation());
  await retimeDemoConversation(db, d.accountId, waiting.id(), wt.marks);

  return { waiting: waiting.id(), handled: handled.id(), resolved: resolved.id() };
}

/** A visitor of the demo's widget: asks like the widget does and waits until the answer is stored. */
class Visitor {
  private conversationId: string | undefined;
  private asked = 0;
  private readonly claims: WidgetClaims;
  constructor(
    private readonly accountId: number,
    widget: { clientId: string; channelId: number },
  ) {
    const now = Math.floor(Date.now() / 1000);
    this.claims = {
      accountId,
      clientId: widget.clientId,
      channelId: widget.channelId,
      domains: ['localhost'],
      visitorId: randomUUID(),
      iat: now,
      exp: now + 3600,
      visitorBound: false,
    };
  }

  async ask(text: string): Promise<void> {
    const ack = await ask(
      this.claims,
      () => {},
      { conversation_id: this.conversationId, client_message_id: randomUUID(), text },
      { check: async () => {}, overlap: false },
    );
    this.conversationId = ack.conversation_id;
    this.asked++;
    const deadline = Date.now() + 30_000;
    const member: Member = { accountId: this.accountId, userId: 0, role: 'owner' };
    while ((await conversationSummary(member, { conversation_id: this.id() })).answers.length < this.asked) {
      if (Date.now() > deadline) throw new AppError('unavailable', `The demo's answer to "${text}" was not stored within 30 s.`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  id(): string {
    if (!this.conversationId) throw new Error('the visitor has not asked yet');
    return this.conversationId;
  }

  conversation() {
    return { accountId: this.accountId, conversationId: this.id() };
  }
}
