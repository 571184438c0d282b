/** Text limits more than one door enforces (the widget, the dashboard, the Customer API): each defined here once. */

/** A visitor's or a member's question: the socket protocol, "Try a question" and its form. */
export const MAX_QUESTION_CHARS = 4000;

/** A list search (`query` of the Customer API's lists, `q` of the dashboard tables). */
export const MAX_QUERY_CHARS = 200;
