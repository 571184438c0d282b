export default function NotFound() {
  return (
    <main className="login-wrap">
      <div className="panel empty">
        <h1>Not found</h1>
        <p>
          <a href="/">Back to svc</a>
        </p>
      </div>
    </main>
  );
}
