import { AppError } from '../core/errors';
import { bearerToken } from './api-keys';
import { tokenRefusedAsHttp, verifyWidgetToken, withVisitor, type WidgetClaims } from './widget-tokens';

/** Widget HTTP calls carry the access token as `Authorization: Bearer`. */
export async function requireWidgetToken(req: Request): Promise<WidgetClaims> {
  const token = bearerToken(req.headers.get('authorization'));
  if (!token) throw new AppError('unauthorized', 'Send the widget access token as "Authorization: Bearer <token>".');
  const claims = await verifyWidgetToken(token).catch(tokenRefusedAsHttp);
  return withVisitor(claims, req.headers.get('x-svc-visitor'));
}
