'use server';
import { revalidatePath } from 'next/cache';
import { requireMember } from '@/lib/auth/session';
import { actionResult } from '@/lib/dashboard/action-result';
import { splitDomainBox } from '@/lib/widget-clients/contract';
import { APPEARANCE_LABELS } from '@/lib/widget-clients/appearance';
import { createWidgetClient, deleteWidgetClient, renameClient, rotateClientSecret, setClientAppearance, setClientDomains } from '@/lib/widget-clients/service';

const domainsOf = (text: FormDataEntryValue | null) => splitDomainBox(String(text ?? ''));

export async function createClientAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('widget.manage');
    const channel = String(form.get('channel') ?? '');
    const name = String(form.get('name') ?? '').trim();
    const created = await createWidgetClient(by, {
      accountId,
      name: name || undefined,
      domains: domainsOf(form.get('domains')),
      channelId: channel ? Number(channel) : undefined,
    });
    revalidatePath('/widget');
    return { clientId: created.client_id, secret: created.client_secret };
  });
}

export async function updateDomainsAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('widget.manage');
    const updated = await setClientDomains(by, accountId, String(form.get('clientId')), domainsOf(form.get('domains')));
    revalidatePath('/widget');
    return { domains: updated.domains };
  });
}

export async function renameClientAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('widget.manage');
    const updated = await renameClient(by, accountId, String(form.get('clientId')), String(form.get('name') ?? ''));
    revalidatePath('/widget');
    return { name: updated.name };
  });
}

export async function rotateSecretAction(clientId: string) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('widget.manage');
    const r = await rotateClientSecret(by, accountId, clientId);
    return { secret: r.client_secret };
  });
}

export async function deleteClientAction(clientId: string) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('widget.manage');
    await deleteWidgetClient(by, { accountId, clientId: String(clientId) });
    revalidatePath('/widget');
    return {};
  });
}

export async function saveAppearanceAction(_prev: unknown, form: FormData) {
  return actionResult(async () => {
    const { accountId, by } = await requireMember('widget.manage');
    const fields = Object.fromEntries(Object.keys(APPEARANCE_LABELS).map((k) => [k, String(form.get(k) ?? '')]));
    const appearance = await setClientAppearance(by, accountId, String(form.get('clientId')), fields);
    revalidatePath('/widget');
    return { appearance };
  });
}
