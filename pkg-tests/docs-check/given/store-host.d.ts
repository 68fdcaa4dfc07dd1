// Given to README blocks marked `given: store-host`: a store and a host made elsewhere.
declare var store: import('subagent-tree').SessionStore;
declare var host: import('subagent-tree').AgentHost;
