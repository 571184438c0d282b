import { getDb } from '../../db/client';
import { getWidgetClientForAuth } from '../../db/queries/widget-clients';
import { AppError } from '../core/errors';
import { bearerToken } from './api-keys';
import { tokenRefusedAsHttp, verifyWidgetToken, withVisitor, type WidgetClaims } from './widget-tokens';

/** Widget HTTP calls carry the access token as `Authorization: Bearer`; its client must still exist (a deleted client or account stops at once). */
export async function requireWidgetToken(req: Request): Promise<WidgetClaims> {
  const token = bearerToken(req.headers.get('authorization'));
  if (!token) throw new AppError('unauthorized', 'Send the widget access token as "Authorization: Bearer <token>".');
  const claims = await verifyWidgetToken(token).catch(tokenRefusedAsHttp);
  if (!(await getWidgetClientForAuth(await getDb(), claims.clientId))) throw new AppError('unauthorized', 'token invalid: the widget client no longer exists');
  return withVisitor(claims, req.headers.get('x-svc-visitor'));
}
