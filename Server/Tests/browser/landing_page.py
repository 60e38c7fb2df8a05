#!/usr/bin/env python3
"""The pasteboard landing page in a real browser (headless Chromium through selenium).

Against a running LinkRelay Server (started by Server/scripts/browser-tests), as an iPhone's
Safari would see it: the tap goes through the page that adds the fingerprint, the landing page
shows one button, and the button, inside its click handler, writes the link with its click token
to the clipboard and then goes to the App Store (here a page on loopback that records the visit:
there is no network). The clipboard is read back through the browser, with the permission granted
through the DevTools protocol. Then the token is reported in an install, as the SDK does, and is
attributed to that click; a second install with it is not. Without JavaScript the tap is the
plain store redirect (nothing could be copied).

    landing_page.py --server http://127.0.0.1:PORT --admin-key KEY --sdk-key KEY
"""
import argparse
import http.server
import json
import re
import sys
import threading
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
                 "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")

failures = []


def check(condition, what):
    print(("met: " if condition else "FAILED: ") + what)
    if not condition:
        failures.append(what)


def api(server, method, path, key, body=None):
    request = urllib.request.Request(server + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


class Store(http.server.BaseHTTPRequestHandler):
    """The "App Store": a page on loopback that records each visit."""
    visits = []

    def do_GET(self):
        if self.path == "/favicon.ico":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        Store.visits.append(self.path)
        page = b"<!doctype html><html lang='en'><head><title>Store</title></head><body><h1>Store</h1></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args):
        pass


def browser(javascript=True):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--window-size=390,844", "--user-agent=" + IPHONE_SAFARI]:
        options.add_argument(argument)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def grant_clipboard(driver, origins):
    for origin in origins:
        driver.execute_cdp_cmd("Browser.grantPermissions", {
            "origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})


def read_clipboard(driver):
    return driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "navigator.clipboard.readText().then(done, function (e) { done('ERROR ' + e); });")


def install(server, sdk_key, token, screen_width=1179):
    body = {"userAgent": "Acme Shop/2.3.0 iOS/17.4.1", "timezone": "Europe/Berlin", "language": "de_DE", "screenWidth": screen_width,
            "screenHeight": 2556, "platform": "iOS", "platformVersion": "17.4.1", "clickToken": token}
    return api(server, "POST", "/api/sdk/v1/install", sdk_key, body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--admin-key", required=True)
    parser.add_argument("--sdk-key", required=True)
    parser.add_argument("--screenshots", help="a folder for the pages as the browser drew them")
    args = parser.parse_args()

    def shot(driver, name):
        if args.screenshots:
            driver.save_screenshot("%s/%s.png" % (args.screenshots, name))
    server = args.server.rstrip("/")

    store = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Store)
    threading.Thread(target=store.serve_forever, daemon=True).start()
    store_url = "http://127.0.0.1:%d/app/id1" % store.server_address[1]

    api(server, "PUT", "/api/landing-page", args.admin_key, {"enabled": True, "appName": "Acme Shop"})
    api(server, "POST", "/api/links", args.admin_key, {
        "customCode": "spring", "originalUrl": "https://acme.example/spring", "iosAppStoreUrl": store_url,
        "deepLinkPath": "/sale/spring", "title": "Spring sale"})

    # With JavaScript: the fingerprint page, the landing page, the button.
    driver = browser()
    try:
        grant_clipboard(driver, [server, "http://127.0.0.1:%d" % store.server_address[1]])
        driver.get(server + "/spring")
        button = WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "get"))
        check("fp_tz=" in driver.current_url, "the tap went through the page that adds the fingerprint (%s)" % driver.current_url)
        check(driver.find_element(By.TAG_NAME, "h1").text == "Spring sale", "the landing page shows the link's title")
        check(button.text == "Get Acme Shop", "one button, named after the app (%r)" % button.text)
        check(driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en", "the page has a lang")
        shot(driver, "1-landing-page")
        copied = button.get_attribute("data-link")
        token_match = re.fullmatch(re.escape(server) + r"/spring\?lr_click=([A-Za-z0-9]{32})", copied or "")
        check(token_match is not None, "the button copies the link with a 32-character token (%s)" % copied)
        button.click()
        WebDriverWait(driver, 10).until(lambda d: d.current_url.startswith(store_url))
        check(driver.current_url.startswith(store_url), "after the tap the browser is at the store (%s)" % driver.current_url)
        check(Store.visits == ["/app/id1"], "the store was visited once (%s)" % Store.visits)
        shot(driver, "2-store-after-the-tap")
        clipboard = read_clipboard(driver)
        check(clipboard == copied, "the clipboard holds the link with its token (%r)" % clipboard)
    finally:
        driver.quit()

    token = token_match.group(1) if token_match else ""
    first = install(server, args.sdk_key, token)
    check(first.get("attributed") is True and first.get("attributionMethod") == "pasteboard" and first.get("confidenceScore") == 100,
          "an install with the token is attributed by it at 100 (%s)" % {k: first.get(k) for k in ("attributed", "attributionMethod", "confidenceScore")})
    check((first.get("deepLinkData") or {}).get("shortCode") == "spring", "to the link that was tapped")
    # The same report again (its answer lost): the same install, not a second one.
    again = install(server, args.sdk_key, token)
    check(again.get("installId") == first.get("installId") and again.get("clickToken") == "accepted",
          "the same report again is answered the same install (%s)" % again.get("clickToken"))
    # Another device with the copied link: attributed to the same link too, saying its tap was used.
    second = install(server, args.sdk_key, token, screen_width=820)
    check(second.get("installId") != first.get("installId") and second.get("attributionMethod") == "pasteboard"
          and second.get("clickToken") == "used" and (second.get("deepLinkData") or {}).get("shortCode") == "spring",
          "another device with the token is attributed to its link, the answer saying the token was used (%s)" % second.get("clickToken"))

    # Without JavaScript: nothing can be copied, so the plain store redirect.
    Store.visits.clear()
    driver = browser(javascript=False)
    try:
        driver.get(server + "/spring")
        WebDriverWait(driver, 10).until(lambda d: d.current_url.startswith(store_url))
        check(driver.current_url.startswith(store_url), "without JavaScript the tap goes to the store (%s)" % driver.current_url)
        shot(driver, "3-store-without-javascript")
        check(Store.visits == ["/app/id1"], "without JavaScript the store was visited once (%s)" % Store.visits)
    finally:
        driver.quit()
    store.shutdown()

    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("landing page: every check met")


if __name__ == "__main__":
    main()
