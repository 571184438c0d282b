// Apart from ./mail.ts so the main thread can use it without loading the MIME parser.
/** An address as svc uses it (a conversation's contact, the `To` of its mails): one token, no whitespace, control or bracket characters; anything else is no address. */
export const cleanAddress = (a: string | undefined): string | null =>
  a && /^[^\s\u0000-\u001f\u007f<>()",;:\\[\]@]{1,254}@[^\s\u0000-\u001f\u007f<>()",;:\\[\]@]{1,253}$/.test(a) ? a.toLowerCase() : null;
