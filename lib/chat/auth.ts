import { AppError } from '../api/errors';
import { bearerToken } from '../auth/api-keys';
import { tokenRefusedAsHttp, verifyWidgetToken, withVisitor, type WidgetClaims } from '../auth/widget-tokens';
import { getEnv } from '../env';
import { uploadLimits } from '../uploads/service';
import { MAX_QUESTION_CHARS, PROTOCOL_VERSION } from './protocol';

/** Widget HTTP calls carry the access token as `Authorization: Bearer`. */
export async function requireWidgetToken(req: Request): Promise<WidgetClaims> {
  const token = bearerToken(req.headers.get('authorization'));
  if (!token) throw new AppError('unauthorized', 'Send the widget access token as "Authorization: Bearer <token>".');
  const claims = await verifyWidgetToken(token).catch(tokenRefusedAsHttp);
  return withVisitor(claims, req.headers.get('x-svc-visitor'));
}

export function widgetConfig() {
  return {
    protocol: PROTOCOL_VERSION,
    limits: { ...uploadLimits(), question_max_chars: MAX_QUESTION_CHARS, events_per_10s: getEnv().SOCKET_EVENTS_PER_10S },
  };
}
