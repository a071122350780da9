//! A tenant managing its API keys over HTTP, as the tests drive it.

use reqwest::{Client, Method, RequestBuilder, Response};
use serde_json::Value;

/// How the key routes are signed in to.
enum Auth {
    Basic(String, String),
    Key(String),
}

/// `/keys` of one server, as the demo account (or another login).
pub struct Keys {
    http: Client,
    base: String,
    auth: Auth,
}

/// `method path` on `base`, signed with `key`.
pub async fn bearer(http: &Client, method: Method, base: &str, path: &str, key: &str) -> Response {
    http.request(method, format!("{base}{path}"))
        .bearer_auth(key)
        .send()
        .await
        .expect("the server answers")
}

impl Keys {
    /// As the demo account's password.
    pub fn new(base: &str) -> Self {
        Self::with_basic(
            base,
            marketlab::server::DEMO_EMAIL,
            marketlab::server::DEMO_PASSWORD,
        )
    }

    pub fn with_basic(base: &str, email: &str, password: &str) -> Self {
        Keys {
            http: Client::new(),
            base: base.to_string(),
            auth: Auth::Basic(email.into(), password.into()),
        }
    }

    /// As a key with the `manage` scope.
    pub fn with_key(base: &str, key: &str) -> Self {
        Keys {
            http: Client::new(),
            base: base.to_string(),
            auth: Auth::Key(key.into()),
        }
    }

    fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let r = self.http.request(method, format!("{}{path}", self.base));
        match &self.auth {
            Auth::Basic(e, p) => r.basic_auth(e, Some(p)),
            Auth::Key(k) => r.bearer_auth(k),
        }
    }

    async fn send(r: RequestBuilder) -> (u16, Value) {
        let r = r.send().await.expect("the server answers");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn try_create(&self, body: Value) -> (u16, Value) {
        Self::send(self.request(Method::POST, "/keys").json(&body)).await
    }

    /// A new key (the answer with its secret); panics unless 201.
    pub async fn create(&self, body: Value) -> Value {
        let (status, made) = self.try_create(body).await;
        assert_eq!(status, 201, "{made}");
        made
    }

    pub async fn list(&self) -> Value {
        let (status, list) = Self::send(self.request(Method::GET, "/keys")).await;
        assert_eq!(status, 200, "{list}");
        list
    }

    pub async fn try_revoke(&self, id: &str) -> (u16, Value) {
        Self::send(self.request(Method::DELETE, &format!("/keys/{id}"))).await
    }

    pub async fn revoke(&self, id: &str) -> Value {
        let (status, view) = self.try_revoke(id).await;
        assert_eq!(status, 200, "{view}");
        view
    }
}
