import { requirePageMember } from '@/lib/auth/session';
import { answerEngineInfo, DEFAULT_NO_ANSWER_TEXT, getBotSettings } from '@/lib/bot/settings';
import { BotSettingsForm, TryQuestion } from './BotForms';
import { HandoffSection } from './HandoffSection';

export const metadata = { title: 'Bot · svc' };

export default async function BotPage() {
  const { accountId } = await requirePageMember('bot.manage');
  const settings = await getBotSettings(accountId);
  const info = answerEngineInfo();
  return (
    <>
      <h1>Bot</h1>
      <p className="muted">
        How the bot answers visitors from the <a href="/knowledge">knowledge base</a>. It answers with{' '}
        {info.engine === 'model' ? 'the configured model' : 'the built-in engine, which quotes the best passage'}, and declines when nothing is relevant enough.
      </p>
      <BotSettingsForm initial={settings} defaultNoAnswer={DEFAULT_NO_ANSWER_TEXT} defaultModel={info.defaultModel} engine={info.engine} />
      <HandoffSection accountId={accountId} />
      <TryQuestion />
    </>
  );
}
