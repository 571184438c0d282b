'use server';
import { revalidatePath } from 'next/cache';
import { z } from 'zod';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { AppError } from '@/lib/core/errors';
import { WebhookDeliveryId, WebhookEndpointId, WebhookEventType } from '@/lib/webhooks/contract';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  resendWebhookDelivery,
  rotateWebhookSecret,
  sendWebhookTestEvent,
  setWebhookPaused,
} from '@/lib/webhooks/service';
import { describeIssues, issueParams } from '@/lib/zod-issues';

/** Dashboard doors into lib/webhooks: the account always comes from the session, inputs through zod. */
const CreateForm = z.object({
  url: z.string().max(4000),
  events: z.array(WebhookEventType).min(1, 'choose at least one event type'),
});

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw new AppError('invalid_request', describeIssues(issueParams(r.error).slice(0, 1)));
}

export async function createWebhookAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('webhooks.manage');
    const v = parse(CreateForm, { url: String(form.get('url') ?? ''), events: form.getAll('events').map(String) });
    const created = await createWebhookEndpoint(by, { accountId, url: v.url, events: v.events });
    revalidatePath('/webhooks');
    return { secret: created.secret, endpointId: created.endpoint_id, url: created.url };
  });
}

export async function rotateWebhookAction(endpointId: string) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('webhooks.manage');
    const r = await rotateWebhookSecret(by, accountId, parse(WebhookEndpointId, endpointId));
    revalidatePath('/webhooks');
    return { secret: r.secret, hours: r.previous_secret_signs_for_hours };
  });
}

export async function setWebhookPausedAction(endpointId: string, paused: boolean) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('webhooks.manage');
    await setWebhookPaused(by, accountId, parse(WebhookEndpointId, endpointId), parse(z.boolean(), paused));
    revalidatePath('/webhooks');
    return {};
  });
}

export async function deleteWebhookAction(endpointId: string) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('webhooks.manage');
    await deleteWebhookEndpoint(by, accountId, parse(WebhookEndpointId, endpointId));
    revalidatePath('/webhooks');
    return {};
  });
}

export async function resendDeliveryAction(deliveryId: string) {
  return actionResult(async () => {
    const { accountId } = await requireMember('webhooks.manage');
    await resendWebhookDelivery(accountId, parse(WebhookDeliveryId, deliveryId));
    revalidatePath('/webhooks');
    return {};
  });
}

export async function sendTestEventAction(endpointId: string) {
  return actionResult(async () => {
    const { accountId } = await requireMember('webhooks.manage');
    await sendWebhookTestEvent(accountId, parse(WebhookEndpointId, endpointId));
    revalidatePath('/webhooks');
    return {};
  });
}
