export default function NotFound() {
  return (
    <div className="panel empty">
      <h1>Not found</h1>
      <p>There is nothing here for your account.</p>
      <p>
        <a href="/">Back to the overview</a>
      </p>
    </div>
  );
}
