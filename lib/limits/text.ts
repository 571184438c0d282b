/** Limits of a message more than one door enforces (the widget, mail, the dashboard, the Customer API): each defined here once. */

/** A visitor's or a member's question: the socket protocol, "Try a question" and its form. */
export const MAX_QUESTION_CHARS = 4000;

/** Files on one visitor message: the widget's `ask`, and the attachments kept of a mail. */
export const MAX_MESSAGE_ATTACHMENTS = 5;

/** A list search (`query` of the Customer API's lists, `q` of the dashboard tables). */
export const MAX_QUERY_CHARS = 200;
