export default function Home() {
  return (
    <main style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 640, margin: '4rem auto', padding: '0 1rem' }}>
      <h1>svc</h1>
      <p>The Customer API is at <code>/customer-api/v2</code>; its OpenAPI document is at{' '}
        <a href="/customer-api/v2/openapi.json">/customer-api/v2/openapi.json</a>.</p>
    </main>
  );
}
