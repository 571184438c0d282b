import { startTransition, type FormEvent } from 'react';

/**
 * A form's onSubmit that runs its action without React's reset after a form action: that reset
 * puts controlled checkboxes back to their first render while their state says otherwise.
 */
export function submitKeepingInput(action: (form: FormData) => void) {
  return (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    startTransition(() => action(form));
  };
}
