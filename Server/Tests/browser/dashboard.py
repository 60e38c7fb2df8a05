#!/usr/bin/env python3
"""The dashboard in a real browser (headless Chromium through selenium), as its user works it.

Against a running LinkRelay Server (started by Server/scripts/browser-tests) on loopback: sign
in with the admin key, create a link through the form (a title that is a script, a destination
with quotes), find it in the list, follow it as an iPhone would (the page that collects the
fingerprint, then the click) to a destination on loopback, see the click on the link's chart,
load its QR code, have a page of another site post a form to the dashboard without the form's
token (refused, nothing changed), sign out and be refused; have a page on another port of the
host toss the sign-in form's cookie and post its own key (refused: not signed in). No dialog
may open; hostile text must be the DOM's text.

    dashboard.py --server http://127.0.0.1:PORT --admin-key KEY [--screenshots DIR]
"""
import argparse
import csv
import http.server
import json
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 "
                 "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1")
HOSTILE = "<script>alert(1)</script>"

failures = []


def check(condition, what):
    print(("met: " if condition else "FAILED: ") + what)
    if not condition:
        failures.append(what)


class Elsewhere(http.server.BaseHTTPRequestHandler):
    """Another site on loopback: the link's destination, and a page that posts a form to the dashboard."""
    target = ""
    key = ""
    visits = []

    def do_GET(self):
        Elsewhere.visits.append(self.path)
        if self.path.startswith("/toss"):
            # Login CSRF by cookie tossing: this page (another port of the dashboard's host) sets
            # the sign-in form's cookie itself and posts the same token with the attacker's own
            # key. Its path is the sign-in's own, longer than the dashboard's real cookie's (which
            # a page cannot overwrite: it is HttpOnly), so the browser sends it first.
            page = ("<!doctype html><html lang='en'><head><title>Elsewhere</title></head><body>"
                    "<form id='f' method='post' action='%s'><input name='csrf' value='tossed0000'>"
                    "<input name='key' value='%s'></form>"
                    "<script>document.cookie = 'lr_signin=tossed0000; path=/dashboard/sign-in';"
                    "document.getElementById('f').submit()</script></body></html>") % (Elsewhere.target, Elsewhere.key)
        elif self.path.startswith("/attack"):
            page = ("<!doctype html><html lang='en'><head><title>Elsewhere</title></head><body>"
                    "<form id='f' method='post' action='%s'><input name='csrf' value='guess'></form>"
                    "<script>document.getElementById('f').submit()</script></body></html>") % Elsewhere.target
        else:
            page = "<!doctype html><html lang='en'><head><title>Destination</title></head><body><h1>Destination</h1></body></html>"
        body = page.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def browser(user_agent=None, size="1280,900"):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    arguments = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--window-size=" + size]
    if user_agent:
        arguments.append("--user-agent=" + user_agent)
    for argument in arguments:
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def no_dialog(driver):
    try:
        driver.switch_to.alert
        return False
    except NoAlertPresentException:
        return True


def api(server, path, key):
    request = urllib.request.Request(server + path, headers={"Authorization": "Bearer " + key})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--admin-key", required=True)
    parser.add_argument("--attacker-key", required=True, help="another admin key, the one a login CSRF would sign the visitor in with")
    parser.add_argument("--screenshots", help="a folder for the pages as the browser drew them")
    arguments = parser.parse_args()
    server = arguments.server

    elsewhere = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=elsewhere.serve_forever, daemon=True).start()
    other = "http://127.0.0.1:%d" % elsewhere.server_address[1]

    def shot(driver, name):
        if arguments.screenshots:
            driver.save_screenshot("%s/dashboard-%s.png" % (arguments.screenshots, name))

    desk = browser()
    phone = browser(IPHONE_SAFARI, "390,844")
    try:
        # Every wait reads the page again when it was replaced under it (a form's answer loading).
        moving = [StaleElementReferenceException, NoSuchElementException]
        wait = WebDriverWait(desk, 10, ignored_exceptions=moving)
        desk.get(server + "/dashboard/links")
        check(desk.current_url.endswith("/dashboard/sign-in"), "signed out, a page goes to the sign-in")
        check(desk.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en", "the page has a language")
        shot(desk, "sign-in")
        desk.find_element(By.ID, "key").send_keys("lr_admin_00000000_" + "x" * 32)
        desk.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()
        check("not an admin key" in wait.until(lambda d: d.find_element(By.CSS_SELECTOR, ".problem")).text, "a wrong key is refused in one sentence")
        desk.find_element(By.ID, "key").send_keys(arguments.admin_key)
        desk.find_element(By.CSS_SELECTOR, "form.form button[type=submit]").click()
        wait.until(lambda d: d.find_element(By.TAG_NAME, "h1").text == "Overview")
        check(True, "signed in with the admin key: the overview")
        shot(desk, "overview")

        # Create a link: a title that is a script, a destination with quotes.
        # (A URL's double quote is percent-encoded: the API takes RFC 3986's characters only.)
        destination = other + "/dest?q=%22quoted%22&x='y'"
        desk.get(server + "/dashboard/links/new")
        shot(desk, "new-link")
        desk.find_element(By.ID, "f-originalUrl").send_keys(destination)
        desk.find_element(By.ID, "f-title").send_keys(HOSTILE)
        desk.find_element(By.ID, "f-customCode").send_keys("autumn")
        desk.find_element(By.ID, "f-utm_source").send_keys("newsletter")
        desk.find_element(By.CSS_SELECTOR, "form.link-form button[type=submit]").click()
        wait.until(lambda d: "/dashboard/links/" in d.current_url and d.find_elements(By.ID, "short-url"))
        check(no_dialog(desk), "no dialog opened on the link's page")
        check(desk.find_element(By.TAG_NAME, "h1").text == HOSTILE + " (autumn)", "the title is the DOM's text, not a script")
        stored = api(server, "/api/links/" + desk.current_url.rsplit("/", 1)[1], arguments.admin_key)["original_url"]
        check(desk.find_element(By.ID, "destination").text == stored and "'y'" in stored and "&x=" in stored,
              "the destination with quotes is the DOM's text, as stored: " + stored)
        short = desk.find_element(By.ID, "short-url").text
        check(short.endswith("/autumn"), "the short URL to copy: " + short)
        link_page = desk.current_url
        link_id = link_page.rsplit("/", 1)[1]

        desk.get(server + "/dashboard/links?q=autu")
        rows = desk.find_elements(By.CSS_SELECTOR, "table.links tbody tr")
        check(len(rows) == 1 and rows[0].find_element(By.TAG_NAME, "a").text == "autumn", "found in the list by a search")
        check(no_dialog(desk) and HOSTILE in rows[0].text, "the list shows the title as text")
        shot(desk, "links")

        # Follow it as an iPhone's Safari: the fingerprint page, then the click, then the destination.
        phone.get(server + "/autumn")
        WebDriverWait(phone, 10, ignored_exceptions=moving).until(lambda d: d.current_url.startswith(other + "/dest"))
        check(any(path.startswith("/dest") for path in Elsewhere.visits), "the phone reached the destination")

        desk.get(link_page)
        check(desk.find_element(By.ID, "total-clicks").text == "1", "the click is counted on the link's page")
        bars = [bar for bar in desk.find_elements(By.CSS_SELECTOR, "svg.chart rect.bar") if bar.get_attribute("data-clicks") == "1"]
        check(len(bars) == 1, "the chart has today's bar")
        check("newsletter" in desk.find_element(By.ID, "b-utm").find_element(By.XPATH, "..").text, "the UTM source is listed")
        shot(desk, "link")
        # Download the link's clicks as CSV, and read it.
        downloads = tempfile.mkdtemp()
        desk.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        desk.find_element(By.ID, "clicks-csv").click()
        path = os.path.join(downloads, "autumn-clicks.csv")
        for _ in range(100):
            if os.path.exists(path):
                break
            time.sleep(0.1)
        with open(path, newline="", encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
        check(len(rows) == 1 and rows[0]["platform"] == "ios" and rows[0]["utm_source"] == "newsletter" and rows[0]["bot"] == "no",
              "the downloaded CSV holds the click: %s" % rows)
        qr = desk.find_element(By.CSS_SELECTOR, "section img")
        check(wait.until(lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", qr)), "the QR code image loads")

        # Create a key, see it once, use it, revoke it.
        desk.get(server + "/dashboard/keys")
        desk.find_element(By.ID, "key-name").send_keys("browser <i>key</i>")
        desk.find_element(By.CSS_SELECTOR, "#key-scope option[value=admin]").click()
        desk.find_element(By.CSS_SELECTOR, "section form.form button[type=submit]").click()
        secret = wait.until(lambda d: d.find_element(By.ID, "new-secret")).text
        check(secret.startswith("lr_admin_"), "the new key is shown once")
        check(api(server, "/api/links/" + link_id, secret)["id"] == link_id, "the new key works against the API")
        shot(desk, "keys")
        desk.get(server + "/dashboard/keys")
        check(secret not in desk.page_source, "the key is never shown again")
        row = [r for r in desk.find_elements(By.CSS_SELECTOR, "table.keys tbody tr") if secret.startswith(r.get_attribute("data-prefix"))]
        check(len(row) == 1 and "browser <i>key</i>" in row[0].text, "listed by its prefix, its name as text")
        row[0].find_element(By.CSS_SELECTOR, "button").click()
        wait.until(lambda d: any(
            secret.startswith(r.get_attribute("data-prefix")) and "revoked" in r.find_element(By.CSS_SELECTOR, "td.status").text
            for r in d.find_elements(By.CSS_SELECTOR, "table.keys tbody tr")))
        try:
            api(server, "/api/links/" + link_id, secret)
            check(False, "the revoked key is refused")
        except urllib.error.HTTPError as error:
            check(error.code == 401, "the revoked key is refused (%d)" % error.code)

        # Every other page, drawn; and on a phone's width nothing is wider than the screen.
        for name in ["installs", "events", "apps"]:
            desk.get(server + "/dashboard/" + name)
            check(desk.find_element(By.TAG_NAME, "h1").text.lower() == name, "the %s page" % name)
            shot(desk, name)
        desk.set_window_size(390, 844)
        for page in [link_page, server + "/dashboard/links", server + "/dashboard/links/new", server + "/dashboard"]:
            desk.get(page)
            wide = desk.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
            check(wide <= 0, "%s fits a phone's width (%d px wider than the screen)" % (page.replace(server, ""), max(wide, 0)))
        shot(desk, "link-phone")
        desk.set_window_size(1280, 900)

        # Another site posts a form to the dashboard, without the form's token.
        Elsewhere.target = server + "/dashboard/links/%s/deactivate" % link_id
        desk.get(other + "/attack")
        wait.until(lambda d: d.current_url.startswith(server))
        refused = "/deactivate" in desk.current_url and any(
            words in desk.page_source for words in ["not signed in", "token is missing", "sent from another site"])
        check(refused, "the cross-site form is refused")
        check(api(server, "/api/links/" + link_id, arguments.admin_key)["is_active"] is True, "and the link is still active")

        # Sign out, and be refused.
        desk.get(server + "/dashboard")
        desk.find_element(By.CSS_SELECTOR, "form.sign-out button").click()
        wait.until(lambda d: d.current_url.endswith("/dashboard/sign-in"))
        desk.get(link_page)
        check(desk.current_url.endswith("/dashboard/sign-in"), "signed out, the link's page goes to the sign-in")

        # Another port of the same host tosses the sign-in cookie and posts its own key (login CSRF).
        Elsewhere.target = server + "/dashboard/sign-in"
        Elsewhere.key = arguments.attacker_key
        desk.get(other + "/toss")
        wait.until(lambda d: d.current_url.startswith(server))
        check("sent from another site" in desk.page_source,
              "the sign-in posted from another port is refused: " + desk.find_element(By.TAG_NAME, "body").text[:200].replace("\n", " "))
        desk.get(server + "/dashboard")
        check(desk.current_url.endswith("/dashboard/sign-in"), "and the browser is not signed in to the attacker's project")
    finally:
        desk.quit()
        phone.quit()
        elsewhere.shutdown()
    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("dashboard: every check met")


if __name__ == "__main__":
    main()
