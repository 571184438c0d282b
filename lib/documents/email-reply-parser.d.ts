// email-reply-parser ships no types: the part lib/documents/mail.ts uses.
declare module 'email-reply-parser' {
  export default class EmailReplyParser {
    parseReply(text: string): string;
  }
}
