// Small shared pieces: a confirmation dialog (<dialog>, so Escape and focus work by keyboard),
// an error line, a copy button, dates.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export function ErrorLine({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return <p class="error" role="alert">{error instanceof Error ? error.message : String(error)}</p>;
}

export function Confirm({ title, children, confirmLabel, danger, onConfirm, onClose }: {
  title: string; children?: ComponentChildren; confirmLabel: string; danger?: boolean; onConfirm: () => void | Promise<void>; onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const close = () => onClose();
    d.addEventListener('close', close);
    return () => d.removeEventListener('close', close);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="confirm-title">
      <h2 id="confirm-title">{title}</h2>
      {children}
      <div class="row end">
        <button type="button" onClick={() => ref.current!.close()}>Cancel</button>
        <button type="button" class={danger ? 'danger' : 'primary'} disabled={busy} onClick={async () => {
          setBusy(true);
          try { await onConfirm(); } finally { setBusy(false); ref.current?.close(); }
        }}>{confirmLabel}</button>
      </div>
    </dialog>
  );
}

export function Modal({ title, children, onClose }: { title: string; children: ComponentChildren; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const close = () => onClose();
    d.addEventListener('close', close);
    return () => d.removeEventListener('close', close);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="modal-title" class="wide">
      <h2 id="modal-title">{title}</h2>
      {children}
      <div class="row end"><button type="button" class="primary" onClick={() => ref.current!.close()}>Done</button></div>
    </dialog>
  );
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button type="button" onClick={async () => {
      try {
        await navigator.clipboard.writeText(text);
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      } catch { /* clipboard refused: the text stays selectable */ }
    }} aria-live="polite">{done ? 'Copied' : label}</button>
  );
}

export const when = (iso: string | null) => (iso === null ? '—' : new Date(iso).toLocaleString());
