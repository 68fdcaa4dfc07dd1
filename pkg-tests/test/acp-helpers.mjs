// The ACP SDK's client app for the tests: updates recorded, waits on named
// conditions, and every line the agent wrote tapped off the wire.
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk/unstable';

/**
 * The SDK's client app over `toAgent` (bytes the client writes) and
 * `fromAgent` (bytes the agent wrote, also parsed line by line into `wire`).
 */
export function acpClient({ toAgent, fromAgent, subagents }) {
  const [forClient, tapped] = fromAgent.tee();
  const wire = [];
  (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of tapped) {
      buffer += decoder.decode(chunk, { stream: true });
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        if (buffer.slice(0, at).trim()) wire.push(JSON.parse(buffer.slice(0, at)));
        buffer = buffer.slice(at + 1);
      }
    }
  })();
  const updates = [];
  const waiters = [];
  const app = client({ name: 'test-client' }).onNotification(methods.client.session.update, ({ params }) => {
    updates.push(params);
    for (const w of [...waiters]) if (w.test(updates)) (waiters.splice(waiters.indexOf(w), 1), w.resolve());
  });
  /** Resolves once `test(updates)` holds (checked as each update arrives). */
  const until = (test, what, ms = 10000) =>
    test(updates)
      ? Promise.resolve()
      : new Promise((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}: ${updates.map((u) => u.update.sessionUpdate).join(', ')}`)), ms);
          waiters.push({ test, resolve: () => (clearTimeout(timer), resolve()) });
        });
  /** Initializes (advertising subagents or not), then runs `op(ctx, initializeResponse)`; the connection closes after. */
  const run = (op) =>
    app.connectWith(ndJsonStream(toAgent, forClient), async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: subagents ? { subagents: {} } : {},
      });
      return op(ctx, init);
    });
  return { run, updates, until, wire };
}

/** Session updates as lines `session: kind detail`, sessions and children by name. */
export const transcript = (updates, names) =>
  updates.map(({ sessionId, update: u }) => {
    const who = names.get(sessionId) ?? sessionId;
    const detail =
      u.sessionUpdate === 'subagent_update'
        ? `${names.get(u.sessionId) ?? u.sessionId} ${u.state?.state ?? ''}${u.state?.stopReason ? ` ${u.state.stopReason}` : ''}${u.title ? ` title=${u.title}` : ''}`
        : u.sessionUpdate === 'tool_call'
          ? u.title
          : u.sessionUpdate === 'tool_call_update'
            ? u.status
            : u.sessionUpdate === 'session_message'
              ? `from ${names.get(u.senderSessionId) ?? u.senderSessionId}`
              : u.content?.text ?? '';
    return `${who}: ${u.sessionUpdate} ${detail}`.trim();
  });
