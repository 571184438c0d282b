/** The knowledge base and the questions of the chat benchmarks (a few KB of FAQ text). */
export const FAQ = `# Acme Widgets — frequently asked questions

## Shipping and delivery

How long does shipping take? Standard shipping takes 3 to 5 business days inside the EU and 5 to 8 business days to the United States and Canada. Express shipping arrives in 1 to 2 business days and costs 12 euros. Orders placed before 14:00 CET leave the warehouse the same day. You receive a tracking link by email as soon as the parcel is handed to the carrier.

Do you ship internationally? Yes, we ship to 42 countries. Customs duties for shipments outside the EU are paid by the recipient; the carrier collects them on delivery. We cannot ship batteries to Australia or New Zealand.

## Returns and refunds

What is your return policy? You can return any unused product within 30 days of delivery for a full refund. Print the prepaid return label from your account page, pack the product in its original box and drop it at any post office. Refunds are issued to the original payment method within 5 business days after the return arrives at our warehouse.

Can I exchange a product for a different size or colour? Yes. Start a return from your account page and choose "exchange" instead of "refund"; we ship the replacement as soon as the carrier scans your return parcel, so you do not wait for it to arrive.

## Payments and invoices

Which payment methods do you accept? We accept Visa, Mastercard, American Express, PayPal, Apple Pay, Google Pay and bank transfer. Business customers can pay by invoice with 30-day terms after a credit check.

How do I get an invoice with my VAT number? Add your company name and VAT number under Account → Billing before you order. Invoices are generated automatically and can be downloaded as PDF from the order page. We cannot change the VAT number on an invoice after it was issued, but support can issue a credit note and a corrected invoice.

## Accounts and security

How do I reset my password? Click "Forgot password" on the login page and enter your email address. The reset link is valid for 60 minutes. If the email does not arrive, check your spam folder or contact support.

Do you support two-factor authentication? Yes. Turn it on under Account → Security with any authenticator app. Keep the recovery codes in a safe place: support cannot disable two-factor authentication without verifying your identity.

## Warranty and repairs

What does the warranty cover? Every Acme widget has a two-year warranty covering manufacturing defects. Damage from drops, water or unauthorised repairs is not covered. To claim the warranty, open a ticket with your order number and a photo or video of the defect; we send a replacement or repair the widget free of charge.

Do you sell spare parts? Batteries, chargers, straps and replacement screens are available in the spare parts shop. Original parts keep the warranty valid.

## Subscriptions

How do I cancel my subscription? Go to Account → Subscriptions and click "Cancel". The subscription stays active until the end of the paid period and is not renewed. You can reactivate it at any time before it ends without losing your settings.

Can I pause my subscription? Yes, for up to three months once a year. Paused subscriptions are not billed.
`;

export const QUESTIONS = [
  'How long does shipping take?',
  'Do you ship internationally to Canada?',
  'What is your return policy?',
  'Can I exchange a product for a different size?',
  'Which payment methods do you accept?',
  'How do I get an invoice with my VAT number?',
  'How do I reset my password?',
  'Do you support two-factor authentication?',
  'What does the warranty cover?',
  'Do you sell spare parts like batteries?',
  'How do I cancel my subscription?',
  'Can I pause my subscription?',
  'When will my refund arrive?',
  'How much does express shipping cost?',
  'Is water damage covered by the warranty?',
  'Can business customers pay by invoice?',
  'Do I pay customs duties?',
  'Where is my tracking link?',
  'What is the meaning of life?',
  'Do you have a store in Tokyo?',
];
