/** POST /api/widget/uploads — one visitor file (multipart, field "file"), typed by its bytes. */
import { AppError } from '@/lib/api/errors';
import { jsonResponse, methodNotAllowed } from '@/lib/api/handler';
import { preflight, widgetRoute, withCors } from '@/lib/api/widget-route';
import { requireWidgetToken } from '@/lib/chat/auth';
import { checkDeclaredLength, storeUpload } from '@/lib/uploads/service';

export const dynamic = 'force-dynamic';
export const POST = widgetRoute(async (req) => {
  const claims = await requireWidgetToken(req);
  checkDeclaredLength(req.headers.get('content-length'));
  let form: FormData;
  try { form = await req.formData(); } catch { throw new AppError('invalid_request', 'Send multipart/form-data with one file in the field "file".'); }
  const files = [...form.values()].filter((v): v is File => typeof v !== 'string');
  if (files.length !== 1) throw new AppError('invalid_request', `Send exactly one file (got ${files.length}).`);
  return withCors(jsonResponse(await storeUpload(claims, files[0]!), { status: 201 }), 'POST');
});
export const OPTIONS = preflight('POST');
export const { GET, PUT, PATCH, DELETE } = methodNotAllowed('POST');
