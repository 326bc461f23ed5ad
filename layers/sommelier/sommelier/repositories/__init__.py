"""The data ports (catalogue, conversation store, shop) and their two adapters: in process and Lambda invoke."""
