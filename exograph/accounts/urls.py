from django.urls import path

from exograph.accounts import views

app_name = "accounts"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("signup/", views.signup, name="signup"),
    path("account/password/", views.PasswordChangeView.as_view(), name="password_change"),
    path("account/password/reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("account/password/reset/sent/", views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path("account/password/reset/done/", views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
    path(
        "account/password/reset/<str:uidb64>/<str:token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("account/verify/resend/", views.email_verification_resend, name="email_verification_resend"),
    path("account/verify/<str:uidb64>/<str:token>/", views.email_verify, name="email_verify"),
    path("account/delete/", views.account_delete_view, name="account_delete"),
    path("mcp-setup/", views.mcp_setup, name="mcp_setup"),
    path("account/keys/", views.api_keys, name="api_keys"),
    path("account/keys/<int:key_id>/revoke/", views.api_key_revoke_view, name="api_key_revoke"),
    path("account/keys/<int:key_id>/edit/", views.api_key_edit_view, name="api_key_edit"),
]
