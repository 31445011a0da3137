// Reads a UI message stream body (SSE) from stdin with the `ai` package's own reader and prints
// what it builds as JSON: {"message": {"id", "role", "parts"}, "chunks": [...], "errors": [...]}.
//
// The body goes through what `useChat`'s DefaultChatTransport does with a response body:
// parseJsonEventStream with uiMessageChunkSchema (strict objects: an unknown key is an error),
// then readUIMessageStream, which applies every chunk to the message as useChat does. What the
// reader reports (`error` chunks, chunks it cannot apply) is collected in "errors"; a chunk that
// does not fit the schema ends the script with status 1.
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from 'ai';

const input = [];
for await (const piece of process.stdin) {
  input.push(piece);
}
const body = Buffer.concat(input);

const bytes = new ReadableStream({
  start(controller) {
    controller.enqueue(new Uint8Array(body));
    controller.close();
  },
});

const chunks = [];
const errors = [];
const failures = [];
const parsed = parseJsonEventStream({ stream: bytes, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(result, controller) {
      if (!result.success) {
        failures.push(String(result.error?.message ?? result.error));
        throw result.error;
      }
      chunks.push(result.value);
      controller.enqueue(result.value);
    },
  }),
);

let message = null;
for await (const snapshot of readUIMessageStream({
  stream: parsed,
  onError: (error) => {
    const text = String(error?.message ?? error);
    if (!failures.includes(text)) {
      errors.push(text);
    }
  },
})) {
  message = snapshot;
}

if (failures.length > 0) {
  process.stderr.write(`${failures.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(JSON.stringify({ message, chunks, errors }));
