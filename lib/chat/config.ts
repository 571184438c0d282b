import { getEnv } from '../env';
import { uploadLimits } from '../uploads/service';
import { appearanceOfClient } from '../widget-clients/service';
import { MAX_QUESTION_CHARS, PROTOCOL_VERSION } from './protocol';

/**
 * What the widget reads at load (`GET /api/widget/config`): the protocol and the limits it must
 * respect; with `client_id`, also that client's appearance set on /widget.
 */
export async function widgetConfig(clientId: string | null) {
  return {
    protocol: PROTOCOL_VERSION,
    limits: { ...uploadLimits(), question_max_chars: MAX_QUESTION_CHARS, events_per_10s: getEnv().SOCKET_EVENTS_PER_10S },
    ...(clientId === null ? {} : { appearance: await appearanceOfClient(clientId) }),
  };
}
