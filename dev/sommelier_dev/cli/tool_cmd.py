"""`sommelier tool NAME 'JSON'`: run the tool function's handler in-process and print its answer."""

from __future__ import annotations

import argparse
import json

from sommelier_dev.cli.output import fail, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "tool", help='call the tool function in-process, e.g. tool search_wines \'{"wine_type":"red"}\''
    )
    parser.add_argument("name", help="search_wines, semantic_search, get_list, get_wines, ...")
    parser.add_argument("arguments", nargs="?", default="{}", help="the arguments as a JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from sommelier.toolfn.handler import handle

    try:
        arguments = json.loads(args.arguments)
    except ValueError as exc:
        return fail(f"the arguments are not valid JSON: {exc}", code=2)
    if args.name == "semantic_search" and isinstance(arguments, dict) and "embedding" not in arguments:
        # The agent embeds queries itself; from the command line we do it on its behalf.
        query = arguments.get("query")
        if isinstance(query, str) and query.strip():
            from sommelier.embeddings import embed_one, provider_from_settings

            provider = provider_from_settings(args.context.settings)
            arguments["embedding"] = embed_one(provider, query)
            arguments["embedding_model"] = provider.model
    try:
        database = args.context.database
    except Exception as exc:  # no database to run against: one clear line
        return fail(f"the database is unavailable: {exc}")
    print_json(handle({"tool": args.name, "arguments": arguments}, database))
    return 0
