import { z } from 'zod';
import { AccountId } from '../accounts/contract';
import { WEBHOOK_EVENT_TYPES } from './rules';

/** Inputs of the webhook doors (CLI, dashboard actions): one schema each, messages a person can act on. */
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES, {
  error: (iss) => `${JSON.stringify(iss.input)} is not an event type; use ${WEBHOOK_EVENT_TYPES.join(', ')}`,
});
export const WebhookEndpointId = z.guid({ error: 'must be an endpoint id (a UUID, as `webhook list` shows it)' });
export const WebhookDeliveryId = z.guid({ error: 'must be a delivery id (a UUID)' });

export const CreateWebhookInput = z.object({
  accountId: AccountId,
  url: z.string({ error: 'is required' }).trim().min(1, 'is required'),
  /** Empty or absent: every type. */
  events: z
    .array(WebhookEventType)
    .max(WEBHOOK_EVENT_TYPES.length * 4)
    .optional(),
});

export type WebhookEndpointView = {
  endpoint_id: string;
  url: string;
  events: string[];
  status: 'active' | 'paused';
  paused_at: string | null;
  pause_reason: string | null;
  failing_since: string | null;
  previous_secret_valid_until: string | null;
  created_at: string;
  last_delivery: { status: string; at: string | null; http_status: number | null } | null;
};
