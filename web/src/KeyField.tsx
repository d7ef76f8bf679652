import { useState } from "react";

/** The API key, kept in this browser's storage; shown when loopd asks for one, or when one is set. */
export function KeyField({
  value,
  onChange,
  required,
}: {
  value: string;
  onChange: (key: string) => void;
  required: boolean;
}) {
  const [draft, setDraft] = useState(value);
  if (!required && !value) return null;
  return (
    <form
      className="key-field"
      onSubmit={(e) => {
        e.preventDefault();
        onChange(draft.trim());
      }}
    >
      <label htmlFor="api-key">API key</label>
      <input
        id="api-key"
        type="password"
        autoComplete="off"
        placeholder="loopd_…"
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
      />
      <button type="submit">{value && draft.trim() === "" ? "Forget" : "Save"}</button>
    </form>
  );
}
