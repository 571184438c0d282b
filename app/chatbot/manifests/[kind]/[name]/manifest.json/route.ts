/** GET /chatbot/manifests/{tracks|versions}/{name}/manifest.json — which bundle the loader injects. */
import { AppError } from '@/lib/core/errors';
import { apiRoute, jsonResponse } from '@/lib/api/handler';
import { withCors } from '@/lib/api/widget-route';
import { resolveManifest } from '@/lib/widget-releases/service';

export const dynamic = 'force-dynamic';
export const GET = apiRoute<{ kind: string; name: string }>(async (_req, { kind, name }) => {
  const manifest = await resolveManifest(kind, name);
  if (!manifest) throw new AppError('not_found', `No widget release for ${kind}/${name}.`);
  return withCors(jsonResponse(manifest, { headers: { 'Cache-Control': 'public, max-age=60' } }), 'GET');
});
