// Given to README blocks marked `given: web-app`: the app's own host, saved root and view.
declare var host: import('subagent-tree').AgentHost;
declare var savedRootId: string;
declare function show(sessionId: string, name: string): void;
