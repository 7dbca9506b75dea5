// A small labelled sample, written for the bench: 20 short spam messages in the families the
// classifier's vocabularies cover (SEO, loans, pharmacy, casino, crypto, adult, advance fee,
// phishing, marketing) and 20 short legitimate messages of the kind a site's contact form gets.
// The spam is S6's training data in Palisade (bench/lib/keys.ts: SIMILARITY compares with it);
// both train baseline B's naive-Bayes classifier at start (bench/baselines/fastify-bayes.ts).

export const SPAM_SAMPLE: readonly string[] = [
  'We offer guaranteed first page Google ranking for your website. Buy 500 high authority backlinks today, cheap SEO packages.',
  'Get a payday loan in minutes, no credit check, instant approval. Apply now and receive up to $5,000 today.',
  'Cheap viagra and cialis online without prescription. Discreet worldwide shipping, best pharmacy prices guaranteed.',
  'Win big at our online casino! Claim your 200% welcome bonus and 100 free spins, play slots and poker now.',
  'Invest in Bitcoin with our AI trading bot and double your crypto in 7 days. Guaranteed returns, withdraw anytime.',
  'Hot singles in your area are waiting to chat with you. Click here to see their private photos tonight.',
  'Dear friend, I am a barrister representing a late client who left 12.5 million USD. Reply with your bank details to claim.',
  'Your account has been suspended. Verify your password within 24 hours at the secure link below or lose access.',
  'Hello, we are a web design agency. We noticed your site is not mobile friendly. Reply for a free quote and audit.',
  'Increase your Instagram followers fast: 10,000 real followers for only $19, delivered in 24 hours.',
  'Guest post opportunity: we publish your article with a dofollow link on our high DA blog network for $50.',
  'Congratulations! You have been selected to receive a $1,000 Walmart gift card. Complete the short survey to claim.',
  'Lose 10 kg in 2 weeks with this miracle keto pill. Doctors hate this simple trick, order your free trial.',
  'Work from home and earn $500 per day with no experience. Limited spots available, register for the free webinar now.',
  'Buy replica Rolex watches and designer handbags at 90% off. Free shipping on all orders this week only.',
  'We can remove negative reviews from Google and Trustpilot. Guaranteed results or your money back.',
  'Unlock your credit score: our experts fix bad credit in 30 days. Call now for a free consultation.',
  'Exclusive offer: cheap hosting and domain for $1 per month, unlimited bandwidth, free SSL certificate.',
  'Get your essay written by professionals, plagiarism free, any subject, delivered before your deadline.',
  'Forex signals with 95% accuracy. Join our VIP Telegram group and start making money today.',
];

export const HAM_SAMPLE: readonly string[] = [
  'Hi, I ordered the walnut desk lamp last week and it still shows processing. Could you check whether it has shipped? Thanks.',
  'Do you deliver to Ireland, and if so how much is shipping for two medium boxes? We would need them before the end of the month.',
  'The invoice for March has the wrong company name on it. Could you send a corrected copy to our accounts department please?',
  'I would like to cancel my subscription at the end of the current billing period. Please confirm by e-mail once it is done.',
  'Is the blue jacket available in size M? The page says out of stock but the shop in town told me you would get more soon.',
  'We are organising a team lunch for 14 people next Friday at one o clock. Do you have a private room and a set menu?',
  'Our API key stopped working this morning after we rotated it. The new one returns 401 from the production server only.',
  'Thank you for the quick repair of my bike last week, it rides like new. I will recommend you to my friends at the club.',
  'Could you tell me whether the course on Saturday is suitable for complete beginners? I have never used a pottery wheel.',
  'The password reset e-mail never arrives. I checked the spam folder too. My account is registered under this address.',
  'Hello, I am a student at the university and would like to ask about an internship in your design team next summer.',
  'The parcel arrived today but one of the three plates is broken. I have attached a photo. How should I return it?',
  'Can I change the delivery address of my order? We are moving house on Monday and I forgot to update it in my account.',
  'Please add me to the waiting list for the evening yoga class on Wednesdays. I can also come on Thursdays if needed.',
  'Your app crashes when I open the settings page on my Android phone since the last update. Is there a fix coming?',
  'Hi, is there a discount for charities? We are a small animal shelter and would like to use your booking software.',
  'I left my umbrella at your restaurant on Sunday evening, a black one with a wooden handle. Did anybody find it?',
  'Could you send me the assembly instructions for the oak bookshelf? The paper copy was missing from the package.',
  'We would like to renew our annual licence for five users and add two more. Can you send a quote for seven users?',
  'Good morning, my appointment is on Tuesday at ten but I have a fever. Can I move it to next week instead please?',
];
