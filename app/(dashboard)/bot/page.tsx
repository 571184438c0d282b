import Link from 'next/link';
import { requirePageMember } from '@/lib/auth/session';
import { answerEngineInfo, DEFAULT_NO_ANSWER_TEXT, getBotSettings, getModelEndpointView } from '@/lib/bot/settings';
import { BotSettingsForm, TryQuestion } from './BotForms';
import { EngineSummary } from './EngineSummary';
import { ModelEndpointForm } from './ModelEndpointForm';
import { HandoffSection } from './HandoffSection';

export const metadata = { title: 'Bot · svc' };

export default async function BotPage() {
  const { accountId } = await requirePageMember('bot.manage');
  const settings = await getBotSettings(accountId);
  const endpoint = await getModelEndpointView(accountId);
  const info = answerEngineInfo(endpoint);
  return (
    <>
      <h1>Bot</h1>
      <p className="muted">
        Questions the bot must keep answering well, run after every knowledge-base change: <Link href="/bot/tests">Answer tests</Link>.
      </p>
      <EngineSummary engine={info.engine} />
      <BotSettingsForm initial={settings} defaultNoAnswer={DEFAULT_NO_ANSWER_TEXT} defaultModel={info.defaultModel} engine={info.engine} />
      <ModelEndpointForm initial={endpoint} defaultModel={info.defaultModel} />
      <HandoffSection accountId={accountId} />
      <TryQuestion />
    </>
  );
}
