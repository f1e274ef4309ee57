# SPDX-License-Identifier: Apache-2.0
"""Runs an embed_server binary on a free loopback port, asks it for the OpenAPI document of the
core routes it mounted, and stops it. Usage: embed_server_run.py EMBED_SERVER DATA_DIR"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    exe, data_dir = sys.argv[1], sys.argv[2]
    os.makedirs(data_dir, exist_ok=True)
    port = free_port()
    server = subprocess.Popen([exe, data_dir, str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        if "serving on" not in line:
            sys.exit(f"embed_server did not start: {line}{server.stdout.read() if server.poll() is not None else ''}")
        url = f"http://127.0.0.1:{port}/core/v1/openapi.json"
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as res:
                    doc = json.load(res)
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.1)
        if not str(doc.get("openapi", "")).startswith("3.") or "/new_account" not in doc.get("paths", {}):
            sys.exit("embed_server: /core/v1/openapi.json is not the core API's document")
        print(f"embed_server ok: GET {url} answered the OpenAPI document ({len(doc['paths'])} paths)")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
